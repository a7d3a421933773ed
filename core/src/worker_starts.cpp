#include "worker_starts.hpp"

#include <system_error>

namespace bb {

WorkerStarts::~WorkerStarts() { settle(); }

void WorkerStarts::warm(Executor& worker, nlohmann::json warm, double timeout_seconds, bool before_timing) {
  if (!background_ || !worker.launch()) return;
  Executor* w = &worker;
  try {
    (before_timing ? for_timing_ : starting_).push_back(std::async(std::launch::async, [w, warm, timeout_seconds] {
      try {
        w->execute(warm, timeout_seconds);
      } catch (...) {  // its first real request says what is wrong with it
      }
    }));
  } catch (const std::system_error&) {  // no thread: the warm request is sent here
    worker.execute(warm, timeout_seconds);
  }
}

void WorkerStarts::wait_started() {
  for (auto& f : starting_)
    if (f.valid()) f.get();
  starting_.clear();
}

void WorkerStarts::retire(std::unique_ptr<Executor> worker) {
  if (!worker) return;
  wait_all_started();  // no worker ends while a warm request is still using it
  if (!background_) return worker.reset();
  try {
    ending_.push_back(std::async(std::launch::async, [w = std::shared_ptr<Executor>(std::move(worker))]() mutable { w.reset(); }));
  } catch (const std::system_error&) {  // no thread: the task's capture ended it as it unwound
  }
}

void WorkerStarts::wait_all_started() {
  wait_started();
  for (auto& f : for_timing_)
    if (f.valid()) f.get();
  for_timing_.clear();
}

void WorkerStarts::settle() {
  wait_all_started();
  for (auto& f : ending_)
    if (f.valid()) f.get();
  ending_.clear();
}

}  // namespace bb
