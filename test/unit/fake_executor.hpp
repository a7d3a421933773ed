// A fake worker for unit tests, in the spirit of ninja's FakeCommandRunner: an Executor that
// answers the worker protocol (worker_protocol.hpp) in this process, with no worker process and
// no plugin loaded. It serves through the worker's own dispatch table (worker_dispatch.hpp): a
// method per command, as the worker's RequestServer, each on its typed request. The run, the job runner and the test driver cannot
// tell it from a real worker on the paths the tests take:
//   probe       -> the library as the script describes it (its functions, its info record), or
//                  "not loaded" with the script's error
//   devices     -> the script's description of the kind (default: unavailable)
//   warm, audit -> {} / {watched: true}; unwatch -> no error
//   prepare     -> a prepared call of (target, case) under its role, the case's inputs adopted from the host's memfd
//                  (the case itself read from the manifest the request names, as a worker does)
//   call, block -> the prepared call's buffers in a sealed memfd, as buffers_layout() lays them out:
//                  the inputs as they came (guards intact), then every output computed by the
//                  target's "kernel": a right one writes 2 * x (x: the first input, element by
//                  element), a wrong one 2 * x + 1, an unwritten one leaves the poison; an
//                  identity target copies x, as the real identity reference does. block also
//                  reports a measurement of constant samples (Answer::sample_seconds).
//   pace        -> fresh inputs for every sample of the prepared call's blocks from then on: each
//                  sample's kernel runs on the inputs the host wrote to the stage, and its
//                  buffers go back there (fresh_inputs_protocol.hpp)
//   end         -> the prepared call ends
// The host judges those buffers as it judges a real worker's (output_checks.hpp): PASS and FAIL
// come from the comparison, never from the fake's say-so.
//
// What it does not model: device buffers and the checker (export, watch, verify... answer an
// error, so the host keeps the buffers at home), inputs made on a device (`generate`: an
// error, as a worker whose runtime cannot make them), Python batches (probe_many answers the
// libraries one by one as probe would; read_many and generate are not served), pinning (no processes: launch() returns false, tasks()
// is empty, as in-process), integrity tampering and "fatal" (script them with Answer::extra),
// output capping. Freezing is modelled: a frozen worker answers nothing (its request times out).
//
// Every executor a FakeWorkers makes shares its script and its log: a test asserts which worker
// got which command, in which process (recycle(), abandon(), a crash or a timeout start a new
// one, whose prepared calls are gone, as a real worker's are).
#pragma once

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dtype.hpp"
#include "host_buffer.hpp"
#include "measure/measurement.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "plugin_library.hpp"
#include "protocol/fresh_inputs_protocol.hpp"
#include "protocol/message_channel.hpp"
#include "protocol/sealed_blob.hpp"
#include "protocol/worker_dispatch.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/session.hpp"
#include "run/workers/executor.hpp"

namespace bb_fake {

using Json = nlohmann::json;

// What a call (or a block) of the target writes into its outputs.
enum class Kernel { right, wrong, unwritten };

// How the fake answers one request.
struct Answer {
  bb::ExecOutcome::Status status = bb::ExecOutcome::Status::ok;
  std::string detail;              // crashed / timed out: the executor's account ("" : what a real one says)
  std::optional<Json> reply;       // this reply, as is, instead of the modelled one (no memfd with it)
  Json extra = Json::object();     // merged into the modelled reply: {"fatal": true}, {"tampered": "..."}
  std::string error;               // the call (or prepare) failed with this error: no buffers
  bool unsupported = false;        // ... and it was BB_ERR_UNSUPPORTED
  bool sticky = false;             // ... and it was a sticky device error
  std::string printed;             // what the worker printed while serving it (stdout and stderr)
  Kernel kernel = Kernel::right;
  double sample_seconds = 0;       // block: the time per call it reports (0: the FakeWorkers default)
  bool replays = false;            // block: every sample answered from the case's inputs, whatever the host wrote (a cache)
  std::size_t honest_samples = 0;  // block: ... but for its first samples, which compute
  std::size_t unpaced_samples = 0;  // block: samples it reports beyond those the host paced (run on inputs of its own)

  static Answer crash(std::string detail = "killed by signal SIGSEGV (Segmentation fault)") {
    Answer a;
    a.status = bb::ExecOutcome::Status::crashed;
    a.detail = std::move(detail);
    return a;
  }
  static Answer timeout() {
    Answer a;
    a.status = bb::ExecOutcome::Status::timed_out;
    return a;
  }
  static Answer failing(std::string message) {
    Answer a;
    a.error = std::move(message);
    return a;
  }
  // BB_ERR_UNSUPPORTED, with the message the plugin gave (the worker's "BB_ERR_UNSUPPORTED: ..." form).
  static Answer unsupported_case(const std::string& message) {
    Answer a;
    a.error = "BB_ERR_UNSUPPORTED: " + message;
    a.unsupported = true;
    return a;
  }
  static Answer computing(Kernel k) {
    Answer a;
    a.kernel = k;
    return a;
  }
  static Answer timed(double seconds_per_call) {
    Answer a;
    a.sample_seconds = seconds_per_call;
    return a;
  }
  static Answer replying(Json reply) {
    Answer a;
    a.reply = std::move(reply);
    return a;
  }
  Answer printing(std::string text) && {
    printed = std::move(text);
    return std::move(*this);
  }
};

// Which requests an Answer serves. Empty fields match anything.
struct Match {
  std::string cmd;
  std::string library;  // the file name of the library the request is about ("identity" for the identity target)
  std::string case_id;  // the prepared call's case
  std::string role;  // impl | reference | baseline
  int times = -1;       // how many requests it answers before it is used up (-1: every one)
};

// What a probe of a library finds.
struct Library {
  bool kernel_impl = true;
  bool reference = false;
  bb::PluginInfo info;
  std::string error;  // not loaded, for this reason
};

// One entry of the log: a request, or what happened to a worker's process.
struct Request {
  int worker = -1;   // the executor, numbered from 0 in the order they were made
  int process = 0;   // that executor's process: a new one after recycle(), abandon(), a crash, a timeout
  std::string cmd;   // the request's cmd, or "recycle" / "abandon"
  std::string role, library, case_id;
  Json request;      // as sent ({} for recycle / abandon)
  bool with_fd = false;
  double timeout = 0;
};

class FakeWorkers;

class FakeExecutor final : public bb::Executor, private bb::WorkerService {
 public:
  FakeExecutor(std::shared_ptr<FakeWorkers> workers, int id) : workers_(std::move(workers)), id_(id) {}
  bb::ExecOutcome execute(const Json& request, double timeout_seconds, int fd = -1) override;
  // A frozen worker answers nothing (a real one's processes do not run): a request sent to it
  // times out. Each freeze and thaw is logged as "freeze" / "thaw".
  bool freeze(bool frozen) override;
  void recycle() override { end_process("recycle"); }
  void abandon() override { end_process("abandon"); }
  void set_walls(bb::WorkerWalls walls) override { walls_ = std::move(walls); }
  const bb::WorkerWalls& walls() const { return walls_; }
  int id() const { return id_; }

 private:
  struct PreparedCall {
    bb::Target target;
    bb::ConcreteCase c;  // the host's (PrepareRequest::test_case)
    std::string device;
    bb::SealedBlob inputs;   // the case's inputs, as the host sent them
    bb::SealedBlob buffers;  // after the last call or block
    bb::UniqueFd pacing;     // fresh inputs for every timed sample ("pace": fresh_inputs_protocol.hpp)
    std::shared_ptr<uint8_t> stage;
  };
  // The commands it models (bb::WorkerService), answering as `answer_` says.
  bb::Message probe(const bb::ProbeRequest& req, bb::UniqueFd) override;
  bb::Message probe_many(const bb::ProbeManyRequest& req, bb::UniqueFd) override;
  bb::Message devices(const bb::DevicesRequest& req, bb::UniqueFd) override;
  bb::Message warm(const bb::WarmRequest& req, bb::UniqueFd) override;
  bb::Message audit(const bb::AuditRequest&, bb::UniqueFd) override { return {{{"watched", true}}, {}}; }
  bb::Message unwatch(const bb::UnwatchRequest&, bb::UniqueFd) override { return {bb::CheckReply{}, {}}; }
  bb::Message prepare(const bb::PrepareRequest& req, bb::UniqueFd inputs) override;
  bb::Message end(const bb::EndRequest& req, bb::UniqueFd) override;
  bb::Message pace(const bb::PaceRequest& req, bb::UniqueFd socket) override;
  bb::Message buffers(const bb::BuffersRequest& req, bb::UniqueFd) override;
  bb::Message call(const bb::CallRequest& req, bb::UniqueFd inputs) override;
  bb::Message block(const bb::BlockRequest& req, bb::UniqueFd) override;
  bb::Message not_served(bb::WorkerCommand c) override {
    return bb::error_message(fmt::format("the fake worker does not serve '{}'", bb::command_name(c)));
  }
  // One call (or a block's calls) of the prepared call's kernel; its buffers kept with it.
  bb::Message run(PreparedCall& s, const bb::CallRequest& how, bb::UniqueFd inputs, const bb::BlockRequest* block);
  std::string paced_block(PreparedCall& s, std::size_t samples, const Answer& a);
  void end_process(const char* why);

  Answer answer_;              // the request being served's
  double served_seconds_ = 0;  // its round trip, where the model says (a block's samples)

  std::shared_ptr<FakeWorkers> workers_;
  int id_;
  int process_ = 0;
  bool frozen_ = false;
  std::map<std::string, PreparedCall> prepared_;
  bb::WorkerWalls walls_;
};

class FakeWorkers : public std::enable_shared_from_this<FakeWorkers> {
 public:
  static std::shared_ptr<FakeWorkers> create() { return std::shared_ptr<FakeWorkers>(new FakeWorkers()); }

  // ---- the script (before the executors are used; safe meanwhile too)
  FakeWorkers& library(const std::string& file_name, Library lib) {
    std::lock_guard lock(mutex_);
    libraries_[file_name] = std::move(lib);
    return *this;
  }
  FakeWorkers& device(const std::string& kind, Json description) {
    std::lock_guard lock(mutex_);
    devices_[kind] = std::move(description);
    return *this;
  }
  // The first rule, in the order given, that matches a request and is not used up answers it;
  // none: the modelled answer of a right worker.
  FakeWorkers& on(Match m, Answer a) {
    std::lock_guard lock(mutex_);
    rules_.push_back({std::move(m), std::move(a)});
    return *this;
  }
  double default_sample_seconds = 1e-4;

  // ---- executors
  std::unique_ptr<FakeExecutor> make() {
    std::lock_guard lock(mutex_);
    return std::make_unique<FakeExecutor>(shared_from_this(), made_++);
  }
  bb::ExecutorFactory factory() {
    auto self = shared_from_this();
    return [self]() -> std::unique_ptr<bb::Executor> { return self->make(); };
  }
  int made() const {
    std::lock_guard lock(mutex_);
    return made_;
  }

  // ---- the log
  std::vector<Request> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }
  std::vector<Request> requests(const std::function<bool(const Request&)>& which) const {
    std::vector<Request> out;
    for (auto& r : log())
      if (which(r)) out.push_back(r);
    return out;
  }
  std::vector<Request> requests(const std::string& cmd) const {
    return requests([&](const Request& r) { return r.cmd == cmd; });
  }
  // One worker's commands in order, recycles included: "prepare call end recycle ...".
  std::string commands(int worker) const {
    std::string s;
    for (const auto& r : log())
      if (r.worker == worker) s += (s.empty() ? "" : " ") + r.cmd;
    return s;
  }

  // ---- for FakeExecutor
  // Logs `r` and finds its answer.
  Answer record(Request r) {
    std::lock_guard lock(mutex_);
    log_.push_back(r);
    for (auto& rule : rules_) {
      const Match& m = rule.match;
      if (m.times == 0) continue;
      if (!m.cmd.empty() && m.cmd != r.cmd) continue;
      if (!m.library.empty() && m.library != r.library) continue;
      if (!m.case_id.empty() && m.case_id != r.case_id) continue;
      if (!m.role.empty() && m.role != r.role) continue;
      if (rule.match.times > 0) --rule.match.times;
      return rule.answer;
    }
    return Answer{};
  }
  void note(int worker, int process, const char* what) {
    std::lock_guard lock(mutex_);
    Request r;
    r.worker = worker;
    r.process = process;
    r.cmd = what;
    r.request = Json::object();
    log_.push_back(std::move(r));
  }
  Json probe(const std::string& path) {
    std::lock_guard lock(mutex_);
    const std::string name = std::filesystem::path(path).filename().string();
    bb::ProbeReply reply;
    auto it = libraries_.find(name);
    Library lib;
    if (it != libraries_.end()) {
      lib = it->second;
    } else {  // unscripted: what its name says
      const std::string stem = std::filesystem::path(path).stem().string();
      const bool reference = stem.size() >= 10 && stem.compare(stem.size() - 10, 10, "_reference") == 0;
      lib.reference = reference;
      lib.kernel_impl = !reference;
    }
    if (!lib.error.empty()) {
      reply.error = lib.error;
      return bb::to_json(reply);
    }
    reply.loaded = true;
    reply.has_kernel_impl = lib.kernel_impl;
    reply.has_reference = lib.reference;
    reply.info = lib.info;
    return bb::to_json(reply);
  }
  std::optional<Library> scripted(const std::string& file_name) {
    std::lock_guard lock(mutex_);
    auto it = libraries_.find(file_name);
    if (it == libraries_.end()) return std::nullopt;
    return it->second;
  }
  Json describe(const std::string& kind) {
    std::lock_guard lock(mutex_);
    if (auto it = devices_.find(kind); it != devices_.end()) return it->second;
    return {{"name", kind}, {"available", false}, {"reason", fmt::format("no {} device (fake worker)", kind)}};
  }

 private:
  FakeWorkers() = default;
  struct Rule {
    Match match;
    Answer answer;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Library> libraries_;
  std::map<std::string, Json> devices_;
  std::vector<Rule> rules_;
  std::vector<Request> log_;
  int made_ = 0;
};

// The executors of a run, all sharing `workers`' script and log.
inline bb::ExecutorFactory make_fake_factory(const std::shared_ptr<FakeWorkers>& workers) { return workers->factory(); }

// ---------------------------------------------------------------------------------------------

namespace detail {

inline std::string library_name(const bb::Target& t) {
  if (t.kind == bb::Target::Kind::identity) return "identity";
  return std::filesystem::path(t.library).filename().string();
}

inline Json call_reply(const Answer& a) {
  bb::CallReply r;
  r.error = a.error;
  r.unsupported = a.unsupported;
  r.sticky = a.sticky;
  return r.to_json();
}

// The buffers of one call of `target` on `inputs` (an inputs blob of `c`), as a worker sends them.
inline bb::Expected<bb::SealedBlob> call_buffers(const bb::ConcreteCase& c, const bb::SealedBlob& inputs, const bb::Target& target, Kernel k) {
  const bb::BlobLayout in = bb::inputs_layout(c), out = bb::buffers_layout(c);
  constexpr std::size_t kGuard = bb::HostBuffer::kGuardBytes;
  return bb::SealedBlob::create(out.total, [&](uint8_t* p) {
    auto guard = [&](uint8_t* raw, std::size_t nbytes) {  // as HostBuffer writes them
      for (std::size_t i = 0; i < kGuard; ++i) {
        raw[i] = bb::guard_byte(i);
        raw[kGuard + nbytes + i] = bb::guard_byte(i + kGuard);
      }
    };
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      uint8_t* raw = p + out.offsets[i];
      guard(raw, c.inputs[i].nbytes());
      std::memcpy(raw + kGuard, inputs.data() + in.offsets[i], c.inputs[i].nbytes());
    }
    // x: the first input as it came (an in-place output overwrites it below).
    std::vector<double> x;
    if (!c.inputs.empty()) {
      const auto& t = c.inputs.front();
      for (int64_t e = 0; e < t.numel(); ++e) x.push_back(bb::load_element(t.dtype, inputs.data() + in.offsets[0], static_cast<std::size_t>(e)));
    }
    for (std::size_t j = 0; j < c.outputs.size(); ++j) {
      const auto& o = c.outputs[j];
      uint8_t* data = nullptr;
      if (o.inplace_input >= 0) {
        data = p + out.offsets[static_cast<std::size_t>(o.inplace_input)] + kGuard;
      } else {
        uint8_t* raw = p + out.offsets[c.inputs.size() + j];
        guard(raw, o.nbytes());
        data = raw + kGuard;
      }
      for (int64_t e = 0; e < o.numel(); ++e) {
        const auto i = static_cast<std::size_t>(e);
        if (k == Kernel::unwritten) {
          bb::poison_element(o.dtype, data + i * bb::dtype_size(o.dtype));
          continue;
        }
        const double v = x.empty() ? static_cast<double>(e) : x[i % x.size()];
        const double right = target.kind == bb::Target::Kind::identity ? v : 2 * v;
        bb::store_element(o.dtype, data, i, k == Kernel::wrong ? right + 1 : right);
      }
    }
  });
}

}  // namespace detail

inline bool FakeExecutor::freeze(bool frozen) {
  if (frozen == frozen_) return true;
  frozen_ = frozen;
  workers_->note(id_, process_, frozen ? "freeze" : "thaw");
  return true;
}

inline void FakeExecutor::end_process(const char* why) {
  workers_->note(id_, process_, why);
  frozen_ = false;
  prepared_.clear();
  ++process_;
}

inline bb::ExecOutcome FakeExecutor::execute(const Json& request, double timeout_seconds, int fd) {
  const std::string cmd = request.value("cmd", "");
  Request r;
  r.worker = id_;
  r.process = process_;
  r.cmd = cmd;
  r.request = request;
  r.with_fd = fd >= 0;
  r.timeout = timeout_seconds;
  r.role = request.value("role", "");
  if (cmd == "probe") {
    r.library = std::filesystem::path(bb::read_request<bb::ProbeRequest>(request).library).filename().string();
  } else if (cmd == "prepare") {
    const auto p = bb::read_request<bb::PrepareRequest>(request);
    r.library = detail::library_name(p.target);
    r.case_id = p.test_case.id;
  } else if (auto it = prepared_.find(r.role); it != prepared_.end()) {
    r.library = detail::library_name(it->second.target);
    r.case_id = it->second.c.id;
  }
  Answer a = workers_->record(r);
  if (frozen_) {
    a.status = bb::ExecOutcome::Status::timed_out;
    a.detail = fmt::format("no result after {:.1f} s; the worker was killed (it was frozen)", timeout_seconds);
  }
  bb::ExecOutcome out;
  if (a.status != bb::ExecOutcome::Status::ok) {
    // Its process is gone: the next request starts a new one, with nothing prepared.
    out.status = a.status;
    out.detail = !a.detail.empty() ? a.detail
                                   : a.status == bb::ExecOutcome::Status::timed_out
                                         ? fmt::format("no result after {:.1f} s; the worker was killed", timeout_seconds)
                                         : "killed by signal SIGSEGV (Segmentation fault)";
    prepared_.clear();
    ++process_;
  } else if (a.reply) {
    out.reply = *a.reply;
  } else {
    answer_ = a;
    served_seconds_ = 0;
    bb::Message m = bb::dispatch(*this, request, bb::UniqueFd(fd >= 0 ? dup(fd) : -1));
    out.reply = std::move(m.body);
    out.fd = std::move(m.fd);
    out.seconds = served_seconds_;
    for (const auto& [k, v] : a.extra.items()) out.reply[k] = v;
  }
  out.output = a.printed;
  out.output_bytes = a.printed.size();
  if (out.seconds == 0) out.seconds = 1e-4;
  return out;
}

namespace detail {
inline bb::Message failed(std::string message) { return bb::error_message(std::move(message)); }
inline bb::Message done(bb::UniqueFd fd = {}) { return {bb::CallReply{}.to_json(), std::move(fd)}; }
}  // namespace detail

inline bb::Message FakeExecutor::probe(const bb::ProbeRequest& req, bb::UniqueFd) { return {workers_->probe(req.library), {}}; }

inline bb::Message FakeExecutor::probe_many(const bb::ProbeManyRequest& req, bb::UniqueFd) {
  bb::SurveyReply reply;
  for (const auto& l : req.libraries) reply.probes.push_back(bb::probe_reply_from_json(workers_->probe(l)));
  return {bb::to_json(reply), {}};
}

inline bb::Message FakeExecutor::devices(const bb::DevicesRequest& req, bb::UniqueFd) { return {workers_->describe(req.kind), {}}; }

inline bb::Message FakeExecutor::warm(const bb::WarmRequest& req, bb::UniqueFd) {
  if (req.device != "cpu" && !workers_->describe(req.device).value("available", false))
    return detail::failed(fmt::format("no {} device (fake worker)", req.device));
  return detail::done();
}

inline bb::Message FakeExecutor::prepare(const bb::PrepareRequest& p, bb::UniqueFd inputs) {
  prepared_.erase(p.role);
  if (p.target.kind != bb::Target::Kind::identity) {
    const std::string name = detail::library_name(p.target);
    const auto lib = workers_->scripted(name);
    if (lib && !lib->error.empty()) return detail::failed(lib->error);
    const bool want_impl = p.target.kind == bb::Target::Kind::kernel_impl;
    const bool has = lib ? (want_impl ? lib->kernel_impl : lib->reference) : true;
    if (!has) return detail::failed(fmt::format("{}: missing symbol {}_{}", p.target.library, p.op, want_impl ? "kernel_impl" : "reference"));
    if (p.device != "cpu") {  // the worker's place_for: no such device here
      bb::CallReply skipped;
      skipped.error = fmt::format("no {} device (fake worker)", p.device);
      skipped.skipped = true;
      return {skipped.to_json(), {}};
    }
  }
  if (!answer_.error.empty()) return {detail::call_reply(answer_), {}};
  if (p.generate) return detail::failed("the fake worker makes no inputs on a device");
  auto blob = bb::SealedBlob::adopt(std::move(inputs), bb::inputs_layout(p.test_case).total);
  if (!blob) return detail::failed("the case's inputs: " + blob.error().message);
  PreparedCall s;
  s.target = p.target;
  s.c = p.test_case;
  s.device = p.device;
  s.inputs = std::move(*blob);
  prepared_[p.role] = std::move(s);
  bb::Message m = detail::done();
  m.body["steps"] = Json::object();
  return m;
}

inline bb::Message FakeExecutor::end(const bb::EndRequest& req, bb::UniqueFd) {
  prepared_.erase(req.role);
  return {Json::object(), {}};
}

inline bb::Message FakeExecutor::pace(const bb::PaceRequest& req, bb::UniqueFd socket) {
  auto it = prepared_.find(req.role);
  if (it == prepared_.end()) return detail::failed(fmt::format("nothing prepared as '{}' (prepare it first)", req.role));
  if (!socket) return detail::failed("fresh inputs: no pacing socket came with the request");
  it->second.pacing = std::move(socket);
  return detail::done();
}

inline bb::Message FakeExecutor::buffers(const bb::BuffersRequest& req, bb::UniqueFd) {
  auto it = prepared_.find(req.role);
  if (it == prepared_.end()) return detail::failed(fmt::format("nothing prepared as '{}' (prepare it first)", req.role));
  if (it->second.buffers.empty()) return detail::failed("no call made yet (fake worker)");
  return detail::done(bb::UniqueFd(dup(it->second.buffers.fd())));
}

inline bb::Message FakeExecutor::call(const bb::CallRequest& req, bb::UniqueFd inputs) {
  auto it = prepared_.find(req.role);
  if (it == prepared_.end()) return detail::failed(fmt::format("nothing prepared as '{}' (prepare it first)", req.role));
  return run(it->second, req, std::move(inputs), nullptr);
}

inline bb::Message FakeExecutor::block(const bb::BlockRequest& req, bb::UniqueFd) {
  auto it = prepared_.find(req.role);
  if (it == prepared_.end()) return detail::failed(fmt::format("nothing prepared as '{}' (prepare it first)", req.role));
  return run(it->second, bb::CallRequest{}, {}, &req);
}

inline bb::Message FakeExecutor::run(PreparedCall& s, const bb::CallRequest& how, bb::UniqueFd inputs, const bb::BlockRequest* block) {
  const Answer& a = answer_;
  if (!a.error.empty()) return {detail::call_reply(a), {}};
  if (!block && (how.generate || how.staged)) return detail::failed("the fake worker makes no inputs on a device");
  bb::SealedBlob other;
  if (!block && inputs) {
    auto blob = bb::SealedBlob::adopt(std::move(inputs), bb::inputs_layout(s.c).total);
    if (!blob) return detail::failed("the call's inputs: " + blob.error().message);
    other = std::move(*blob);
  }
  auto buffers = detail::call_buffers(s.c, other.empty() ? s.inputs : other, s.target, a.kernel);
  if (!buffers) return detail::failed(buffers.error().message);
  s.buffers = std::move(*buffers);
  bb::Message m = detail::done();
  m.body["steps"] = Json::object();
  const bool return_buffers = block ? block->return_buffers : how.return_buffers;
  if (block) {
    const double t = a.sample_seconds > 0 ? a.sample_seconds : workers_->default_sample_seconds;
    bb::Measurement meas;
    meas.mode = block->timing.mode;
    meas.stop = bb::StopReason::converged;
    meas.batch = 1;
    meas.warmup_calls = 1;
    const std::size_t n = std::max<std::size_t>(3, block->timing.rule.min_samples);
    meas.samples.assign(n, t);
    meas.host_samples.assign(n, t);
    meas.wall_time = static_cast<double>(n + 1) * t;
    if (s.pacing)  // each sample on the host's fresh inputs, as a worker's (worker/fresh_stage.hpp)
      if (std::string e = paced_block(s, n - std::min(n - 1, a.unpaced_samples), a); !e.empty()) return detail::failed("fresh inputs: " + e);
    m.body["measurement"] = bb::to_json(meas);
    served_seconds_ = meas.wall_time + 1e-6;  // the host's clock agrees with the worker's
  }
  if (return_buffers) m.fd = bb::UniqueFd(dup(s.buffers.fd()));
  return m;
}

// `samples` calls of the prepared call's kernel, each on the inputs the host wrote to the block's stage
// just before it, each one's buffers left on the stage (a worker's buffers are laid over it). The
// case's inputs are laid there first, as a worker's block does.
inline std::string FakeExecutor::paced_block(PreparedCall& s, std::size_t samples, const Answer& a) {
  const bb::BlobLayout l = bb::buffers_layout(s.c), in = bb::inputs_layout(s.c);
  auto packet = bb::receive_packet(s.pacing.get());  // the block's stage
  if (!packet || packet->second.size() != 1) return "the block's stage did not come over the pacing socket";
  void* p = mmap(nullptr, l.total, PROT_READ | PROT_WRITE, MAP_SHARED, packet->second[0].get(), 0);
  if (p == MAP_FAILED) return "the stage could not be mapped";
  s.stage = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [n = l.total](uint8_t* q) { munmap(q, n); });
  uint8_t* stage = s.stage.get();
  const auto input_at = [&](std::size_t i) { return stage + l.offsets[i] + bb::HostBuffer::kGuardBytes; };
  for (std::size_t i = 0; i < s.c.inputs.size(); ++i) std::memcpy(input_at(i), s.inputs.data() + in.offsets[i], s.c.inputs[i].nbytes());
  for (std::size_t k = 0; k <= samples; ++k) {
    const char tell = k == 0 ? bb::kFreshReady : k == samples ? bb::kFreshLast : bb::kFreshDone;
    if (send(s.pacing.get(), &tell, 1, MSG_NOSIGNAL) != 1) return "the host's pacing socket is gone";
    if (k == samples) return "";
    char go = 0;
    if (recv(s.pacing.get(), &go, 1, 0) != 1 || go != bb::kFreshGo) return "no go from the host";
    auto given = bb::SealedBlob::create(in.total, [&](uint8_t* q) {
      for (std::size_t i = 0; i < s.c.inputs.size(); ++i) std::memcpy(q + in.offsets[i], input_at(i), s.c.inputs[i].nbytes());
    });
    if (!given) return given.error().message;
    const bool replays = a.replays && k >= a.honest_samples;
    auto buffers = detail::call_buffers(s.c, replays ? s.inputs : *given, s.target, a.kernel);
    if (!buffers) return buffers.error().message;
    std::memcpy(stage, buffers->data(), l.total);
    if (replays)  // the inputs it was given stay as they were: only its outputs are the case's
      for (std::size_t i = 0; i < s.c.inputs.size(); ++i) std::memcpy(input_at(i), given->data() + in.offsets[i], s.c.inputs[i].nbytes());
    s.buffers = std::move(*buffers);
  }
  return "";
}

}  // namespace bb_fake
