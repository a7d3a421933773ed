#include "run/workers/worker_starts.hpp"

#include <chrono>
#include <system_error>

#include "trace.hpp"

namespace bb {

bool warmed(const ExecOutcome& out) {
  if (out.status != ExecOutcome::Status::ok) return false;
  // An error is a string; anything else there (a plugin's process wrote the reply) is no warm worker either.
  const auto error = out.reply.is_object() ? out.reply.find("error") : out.reply.end();
  return !out.reply.is_object() || error == out.reply.end() || (error->is_string() && error->get<std::string>().empty());
}

bool send_warm(Executor& worker, const nlohmann::json& warm, double timeout_seconds, const char* what) {
  try {
    const ExecOutcome out = worker.execute(warm, timeout_seconds);
    const bool ok = warmed(out);
    if (tracing())
      trace_line({{"side", "start"}, {"cmd", what}, {"device", warm.value("device", "")}, {"device_index", warm.value("device_index", 0)},
                  {"round_trip_s", out.seconds}, {"ok", ok}, {"detail", ok ? std::string() : out.detail}, {"python", warm.value("python", false)},
                  {"worker_steps", out.reply.is_object() ? out.reply.value("steps", nlohmann::json::object()) : nlohmann::json::object()}});
    return ok;
  } catch (...) {  // its first real request says what is wrong with it
    return false;
  }
}

WorkerStarts::~WorkerStarts() { settle(); }

void WorkerStarts::warm(Executor& worker, nlohmann::json warm, double timeout_seconds, bool before_timing) {
  if (!background_ || !worker.launch()) return;
  Executor* w = &worker;
  auto send = [w, warm, timeout_seconds, before_timing] { return send_warm(*w, warm, timeout_seconds, before_timing ? "warm_for_timing" : "warm"); };
  auto& into = before_timing ? for_timing_ : starting_;
  try {
    into.push_back({w, std::async(std::launch::async, send)});
  } catch (const std::system_error&) {  // no thread: the warm request is sent here
    std::promise<bool> done;
    done.set_value(send());
    into.push_back({w, done.get_future()});
  }
}

std::vector<Executor*> WorkerStarts::wait_started() {
  std::vector<Executor*> failed;
  for (auto& s : starting_)
    if (s.ok.valid() && !s.ok.get()) failed.push_back(s.worker);
  starting_.clear();
  return failed;
}

void WorkerStarts::retire(std::unique_ptr<Executor> worker) {
  if (!worker) return;
  // No worker ends while its own warm request is still using it; the others' starts go on (a job
  // that replaces its reference's worker does not wait for its implementation's context first).
  for (auto* list : {&starting_, &for_timing_})
    for (auto it = list->begin(); it != list->end();)
      if (it->worker == worker.get()) {
        if (it->ok.valid()) it->ok.get();
        it = list->erase(it);
      } else {
        ++it;
      }
  if (!background_) return worker.reset();
  try {
    ending_.push_back(std::async(std::launch::async, [w = std::shared_ptr<Executor>(std::move(worker))]() mutable {
      const auto t0 = std::chrono::steady_clock::now();
      w.reset();
      if (tracing())
        trace_line({{"side", "start"}, {"cmd", "retire"}, {"round_trip_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
    }));
  } catch (const std::system_error&) {  // no thread: the task's capture ended it as it unwound
  }
}

void WorkerStarts::wait_all_started() {
  wait_started();
  for (auto& s : for_timing_)
    if (s.ok.valid()) s.ok.get();
  for_timing_.clear();
}

void WorkerStarts::settle() {
  wait_all_started();
  for (auto& f : ending_)
    if (f.valid()) f.get();
  ending_.clear();
}

}  // namespace bb
