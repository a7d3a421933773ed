#include "test_driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blob_cache.hpp"
#include "device_runtimes.hpp"
#include "fresh_inputs.hpp"
#include "host_buffer.hpp"
#include "sandbox_off.hpp"
#include "measure/clock_audit.hpp"
#include "measure/cpu_pairing.hpp"
#include "measure/timing_of.hpp"
#include "device_check.hpp"
#include "init.hpp"
#include "output_checks.hpp"
#include "measure/paired_timer.hpp"
#include "measure/run_queue.hpp"
#include "parallel.hpp"
#include "worker/test_runner.hpp"
#include "trace.hpp"

namespace bb {

namespace {

// When a block last ended on each device ("cuda:0"), any worker's: a device timed within
// kDeviceWarmFor has its clocks up, so a new worker's first block there skips the long warm-up
// of a first measurement (TimingOptions::device_warm). Shared by the worker pool's threads.
constexpr double kDeviceWarmFor = 0.5;
class DeviceActivity {
 public:
  static DeviceActivity& shared() {
    static DeviceActivity a;
    return a;
  }
  bool warm(const std::string& device) {
    std::lock_guard lock(mutex_);
    auto it = last_.find(device);
    return it != last_.end() && std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second).count() < kDeviceWarmFor;
  }
  void timed(const std::string& device) {
    std::lock_guard lock(mutex_);
    last_[device] = std::chrono::steady_clock::now();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_;
};

// The manifests and cases the host has read, shared by the worker pool's threads.
struct OpCases {
  Manifest manifest;
  std::vector<ConcreteCase> cases;
};
Expected<const OpCases*> op_cases(const TestRequest& req) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<OpCases>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[fmt::format("{}#{}#{}", req.manifest, req.seed ? std::to_string(*req.seed) : "", expansion_key(req.expansion))];
  if (!slot) {
    auto m = load_manifest(req.manifest, req.op);
    if (!m) return m.error();
    if (req.seed) m->seed = *req.seed;
    auto cases = expand_cases(*m, req.expansion);
    if (!cases) return cases.error();
    slot = std::make_unique<OpCases>(OpCases{std::move(*m), std::move(*cases)});
  }
  return slot.get();
}

constexpr std::size_t kOutputCap = 16 * 1024;
// Checked calls on other inputs, placed at secret points among the timed blocks: the first on
// fresh values, the others on the case's inputs with one element in kSparseEvery changed, at
// least one (a cache keyed by sampled elements takes them for the case's). kCheckedCalls among the blocks
// every measurement takes (kMinPairs), then one in every further kMinPairs blocks.
constexpr int kCheckedCalls = 4;
constexpr uint64_t kSparseEvery = 4096;

class TestDriver {
 public:
  TestDriver(const TestRequest& req, const TestWorkers& w, const DriverLimits& limits) : req_(req), w_(w), limits_(limits) {}

  // A worker's reply is read as the protocol says; one of another shape (a key of another type:
  // the implementation's process can write anything) is an ERROR of this test, and every worker
  // of it is replaced, whichever sent it. Never an exception into the worker pool's thread.
  TestResult run() {
    try {
      return steps();
    } catch (const nlohmann::json::exception& e) {
      impl_.fatal = reference_.fatal = baseline_.fatal = true;
      checker_.fatal = w_.checker != nullptr;
      impl_.open = reference_.open = baseline_.open = checker_.open = false;  // no word to its workers: replaced
      return finish(Verdict::error, fmt::format("the worker's reply could not be read ({}); its process was replaced", e.what()));
    }
  }

  TestResult steps() {
    started_ = phase_start_ = Clock::now();
    if (auto failed = setup()) return *failed;
    if (auto failed = make_inputs()) return *failed;
    if (auto failed = prepare()) return *failed;
    if (req_.check) {
      if (auto failed = reference()) return *failed;
      if (auto failed = check()) return *failed;
      if (auto failed = determinism()) return *failed;
    }
    if (req_.time)
      if (auto failed = measure()) return *failed;
    return finish(Verdict::pass, "");
  }

  ~TestDriver() {
    // Nothing stays frozen or pinned, and nothing a failed session held stays in a worker.
    if (pairing_.pinned()) end_pairing();
    for (Executor* e : {w_.impl, w_.reference, w_.baseline})
      if (e) e->freeze(false);
    if (!impl_crashed_ && impl_.open) w_.impl->execute({{"cmd", "end"}, {"session", "impl"}}, 10);
    if (reference_.open && !reference_.fatal) w_.reference->execute({{"cmd", "end"}, {"session", "reference"}}, 10);
    if (baseline_.open && w_.baseline && !baseline_.fatal) w_.baseline->execute({{"cmd", "end"}, {"session", "baseline"}}, 10);
    if (checker_.open && !checker_.fatal) w_.checker->execute({{"cmd", "unwatch"}}, 10);
    if (checker_.fatal) w_.checker->recycle();
    if (impl_.fatal) w_.impl->recycle();
    if (reference_.fatal) w_.reference->recycle();
    if (baseline_.fatal && w_.baseline) w_.baseline->recycle();
  }

 private:
  using Clock = std::chrono::steady_clock;

  // ---- bookkeeping
  void mark(const char* phase) {
    const auto now = Clock::now();
    r_.phases.seconds[phase] += std::chrono::duration<double>(now - phase_start_).count();
    phase_start_ = now;
  }
  TestResult finish(Verdict v, std::string message) {
    mark(phase_);
    r_.outcome.verdict = v;
    r_.outcome.message = std::move(message);
    r_.outcome.refused = false;
    r_.phases.duration = std::chrono::duration<double>(Clock::now() - started_).count();
    return r_;
  }
  // SKIPPED by the implementation's own word (Outcome::refused).
  TestResult refusal(std::string message) {
    finish(Verdict::skipped, std::move(message));
    r_.outcome.refused = true;
    return r_;
  }
  void enter(const char* phase) {
    mark(phase_);
    phase_ = phase;
  }
  void keep_output(ExecOutcome& out) {
    r_.output.bytes += out.output_bytes;
    if (out.output.empty()) return;
    // The test's head and its tail, as each request's capture keeps them: the last words of a
    // test (before a crash, say) are what a reader looks for.
    r_.output.text += out.output;
    if (r_.output.text.size() > kOutputCap + 128) {
      const std::size_t half = kOutputCap / 2;
      const std::string marker = "\n[... output of this test left out ...]\n";
      if (r_.output.text.find(marker) == std::string::npos || r_.output.text.find(marker) > half)
        r_.output.text = r_.output.text.substr(0, half) + marker + r_.output.text.substr(r_.output.text.size() - half);
      else  // the head is kept already: keep it, and the newest tail
        r_.output.text = r_.output.text.substr(0, half + marker.size()) + r_.output.text.substr(r_.output.text.size() - half);
    }
  }

  // A request to one worker, traced (BACKENDBENCH_TRACE_BLOCKS) with its round trip and the
  // worker's own account of its steps.
  ExecOutcome exec(Executor& e, const char* side, const nlohmann::json& request, double timeout, int fd = -1) {
    ExecOutcome out = e.execute(request, timeout, fd);
    if (out.reply.is_object())  // a Python implementation's just-in-time compilations: apart from every timed region
      if (auto it = out.reply.find("compile_s"); it != out.reply.end() && it->is_number()) r_.phases.seconds["compile_s"] += it->get<double>();
    if (tracing())
      trace({{"side", side}, {"cmd", request.value("cmd", "")}, {"round_trip_s", out.seconds},
             {"worker_steps", out.reply.is_object() ? out.reply.value("steps", nlohmann::json::object()) : nlohmann::json::object()}});
    return out;
  }
  // Host-side work of the test, traced as `what` with its duration.
  void trace_host(const char* what, Clock::time_point since) const {
    if (tracing()) trace({{"side", "host"}, {"cmd", what}, {"round_trip_s", std::chrono::duration<double>(Clock::now() - since).count()}});
  }

  // A request to the implementation's worker; a worker that died or hung is the test's verdict.
  Expected<ExecOutcome> ask_impl(const nlohmann::json& request, double timeout, int fd = -1) {
    use_impl_side();
    ExecOutcome out = exec(*w_.impl, "impl", request, timeout, fd);
    keep_output(out);
    if (out.status != ExecOutcome::Status::ok) {
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      failed_ = finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout, out.detail);
      return make_error("the implementation's worker: " + out.detail);
    }
    if (out.reply.value("fatal", false)) impl_.fatal = true;
    return out;
  }
  // Only one side of a pair runs at a time: the other is frozen, every process of it. Before the
  // test's timing the baseline's worker is left alone: it may still be starting (its warm-up
  // is settled by TestWorkers::quiet, which a frozen worker would never answer).
  void use_impl_side() {
    if (timing_ && w_.baseline && w_.baseline != w_.impl) w_.baseline->freeze(true);
    w_.impl->freeze(false);
  }
  void use_baseline_side() {
    w_.impl->freeze(true);
    w_.baseline->freeze(false);
  }
  // A CPU pairing's end (cpu_pairing.hpp): both sides back on every CPU; the CPU it ended pinned to.
  int end_pairing() {
    const WorkerTasks impl = w_.impl->tasks(), base = w_.baseline ? w_.baseline->tasks() : WorkerTasks{};
    return pairing_.end(impl, w_.baseline ? &base : nullptr);
  }
  TestResult call_failure(const CallReply& c, const std::string& prefix) {
    if (c.sticky) return finish(Verdict::crash, prefix + c.error);
    if (!c.left_behind.empty()) return finish(Verdict::error, prefix + "the call " + c.left_behind);
    if (c.outside) return finish(Verdict::error, prefix + kOutsideStream);
    return finish(Verdict::error, prefix + c.error);
  }

  // ---- the steps
  std::optional<TestResult> setup() {
    auto data = op_cases(req_);
    if (!data) return finish(Verdict::error, data.error().message);
    data_ = *data;
    if (req_.case_index < 0 || static_cast<size_t>(req_.case_index) >= data_->cases.size())
      return finish(Verdict::error, fmt::format("case index {} out of range", req_.case_index));
    c_ = &data_->cases[static_cast<size_t>(req_.case_index)];
    r_.id.case_id = c_->id;  // which case the index resolved to; the host stamps the whole identity (job_runner.cpp)
    r_.id.kind = case_kind_name(c_->kind);
    r_.id.flops = c_->flops;
    r_.id.bytes = c_->bytes;
    return std::nullopt;
  }

  // Inputs of the case, made here from its seed; `salt` other than "" makes other values of the
  // same shapes and initialisers from the host's secret, and `sparse` changes only about one
  // element in kSparseEvery (4096), at least one, of the case's inputs to such values.
  Expected<SealedBlob> inputs_blob(const std::string& salt, uint64_t secret, bool sparse) {
    const BlobLayout l = inputs_layout(*c_);
    const SealedBlob* base = nullptr;
    if (sparse) {
      auto b = host_inputs();
      if (!b) return b.error();
      base = *b;
    }
    std::string error;
    auto blob = SealedBlob::create(l.total, [&](uint8_t* p) {
      for (size_t i = 0; i < c_->inputs.size() && error.empty(); ++i) {
        const auto& t = c_->inputs[i];
        uint8_t* at = p + l.offsets[i];
        if (salt.empty()) {
          if (auto s = fill_tensor(t, at, mix_seed(c_->seed, t.name), data_->manifest.dir()); !s) error = s.error().message;
          continue;
        }
        const uint64_t seed = mix_seed(secret, salt + ":" + t.name);
        if (!sparse) {
          if (auto s = fill_tensor(t, at, seed, data_->manifest.dir()); !s) error = s.error().message;
          continue;
        }
        // The case's inputs (made once: host_inputs) with a few elements at secret places changed
        // to fresh values (one in kSparseEvery, at least one): a cache keyed by k sampled
        // elements notices the change with odds of about k in kSparseEvery, so it must read
        // nearly every element to tell these inputs from the case's. Only those elements are
        // made (an .npy input's fresh values are its file's: the same, as before).
        parallel_copy(at, base->data() + l.offsets[i], t.nbytes());
        const auto n = static_cast<uint64_t>(t.numel());
        for (uint64_t j = 0; n > 0 && j < std::max<uint64_t>(1, n / kSparseEvery); ++j) {
          const uint64_t k = random_bits(seed, j) % n;
          if (const auto v = init_value(t.init, seed, k)) store_element(t.dtype, at, k, *v);
        }
      }
    });
    if (!error.empty()) return make_error(error);
    return blob;
  }

  // Whether the checker compares this test's buffers on the device (checks_), and whether the
  // whole case stays there (device_case_): a device case of checker size, every input made by a
  // generator the device has (not .npy), no in-place output, the reference on the same device,
  // no determinism check (it compares two calls' buffers on the host). Its inputs are then made
  // by each worker on its device (the host's bits: init_values.h), the reference's buffers stay
  // on the device for the checker, and the host makes either only to explain a "no".
  void plan_checks() {
    // A timed test of any size: its samples' fresh inputs are made on the device and kept by the
    // checker (measure()).
    const bool fresh = req_.time && req_.timing.mode == TimingMode::cold && !sandbox_part_off("fresh");
    if (!w_.checker || !req_.check || is_cpu(req_.device) || (buffers_layout(*c_).total < limits_.device_check_min_bytes && !fresh)) return;
    const bool in_place = std::any_of(c_->outputs.begin(), c_->outputs.end(), [](const ConcreteOutput& o) { return o.inplace_input >= 0; });
    // A reference library only: its buffers are believed on the device unseen (an
    // implementation serving as the reference could leave poison there for a twin to match).
    device_case_ = !in_place && input_recipes("", 0, false).has_value() && req_.reference_device == req_.device &&
                   req_.reference.kind == Target::Kind::reference && !req_.check_determinism;
    if (req_.time || device_case_) checks_ = device_checks(*c_);
    if (!checks_) device_case_ = false;
  }

  std::optional<TestResult> make_inputs() {
    enter("inputs_s");
    plan_checks();
    if (device_case_) return std::nullopt;  // each worker makes them on its device
    if (auto in = host_inputs(); !in) return finish(Verdict::error, "inputs: " + in.error().message);
    return std::nullopt;
  }
  // The case's inputs in host memory, made once per run (blob_cache.hpp); a device case's only
  // where the host must judge.
  Expected<const SealedBlob*> host_inputs() {
    if (inputs_ || (inputs_ = BlobCache::shared().find(inputs_key()))) return inputs_.get();
    const auto t0 = Clock::now();
    auto blob = inputs_blob("", 0, false);
    trace_host("inputs", t0);
    if (!blob) return blob.error();
    inputs_ = BlobCache::shared().keep(inputs_key(), std::move(*blob));
    return inputs_.get();
  }
  // The reference's buffers for the case's inputs in host memory, likewise.
  Expected<const SealedBlob*> host_expected() {
    if (expected_ || (expected_ = BlobCache::shared().find(expected_key()))) return expected_.get();
    if (auto in = host_inputs(); !in) return in.error();
    auto blob = reference_buffers(nullptr);
    if (!blob) return blob.error();
    expected_ = BlobCache::shared().keep(expected_key(), std::move(*blob));
    return expected_.get();
  }
  // A worker's prepare request for the case: its inputs made on the device, or the host's blob.
  Expected<ExecOutcome> send_prepare(Executor& e, const char* side, PrepareRequest p) {
    int fd = -1;
    if (device_case_) {
      p.generate = input_recipes("", 0, false);
    } else {
      p.generate.reset();
      auto in = host_inputs();
      if (!in) return in.error();
      fd = (*in)->fd();
    }
    Expected<ExecOutcome> out = std::string(side) == "impl" ? ask_impl(to_json(p), limits_.call_timeout, fd)
                                                            : Expected<ExecOutcome>(exec(e, side, to_json(p), limits_.call_timeout, fd));
    if (out && p.generate && out->status == ExecOutcome::Status::ok) {
      const CallReply c = CallReply::from_json(out->reply);
      if (!c.error.empty() && !c.skipped && !out->reply.value("fatal", false)) {
        // It could not make them (a runtime without fill, memory): the host's, and the case
        // goes the host's way from here on.
        device_case_ = false;
        return send_prepare(e, side, p);
      }
    }
    return out;
  }
  // The case, whichever implementation is under test.
  std::string inputs_key() const {
    return fmt::format("inputs|{}|{}|{}|{}|{}", req_.manifest, req_.op, req_.seed ? std::to_string(*req_.seed) : "", expansion_key(req_.expansion),
                       req_.case_index);
  }
  // The reference's buffers for the case's inputs: one reference function on one device.
  std::string expected_key() const {
    return fmt::format("expected|{}|{}|{}|{}", inputs_key(), req_.reference.library, static_cast<int>(req_.reference.kind), req_.reference_device);
  }

  PrepareRequest prepare_request(const char* session, const Target& t, const std::string& device) const {
    PrepareRequest p;
    p.session = session;
    p.manifest = req_.manifest;
    p.op = req_.op;
    p.case_index = req_.case_index;
    p.seed = req_.seed;
    p.expansion = req_.expansion;
    p.target = t;
    p.device = device;
    p.device_index = req_.device_index;
    return p;
  }

  std::optional<TestResult> prepare() {
    enter("setup_s");
    PrepareRequest p = prepare_request("impl", req_.impl, req_.device);
    p.shareable = checks_.has_value();  // the checker maps its buffers (plan_checks)
    auto out = send_prepare(*w_.impl, "impl", p);
    if (!out) return failed_ ? failed_ : finish(Verdict::error, "inputs: " + out.error().message);
    impl_.open = true;
    const CallReply c = CallReply::from_json(out->reply);
    if (c.skipped) return finish(Verdict::skipped, c.error);
    if (!c.error.empty()) return call_failure(c, "");
    return std::nullopt;
  }

  // The reference's buffers for `inputs` (the case's or another set), from its own worker.
  // The reference's session, once per test. Its buffers are shareable where its checked calls may
  // be made on the device (checked_on_device).
  Status prepare_reference() {
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    if (reference_.open) return Ok{};
    PrepareRequest p = prepare_request("reference", req_.reference, req_.reference_device);
    p.shareable = checks_.has_value() && req_.reference_device == req_.device;
    auto sent = send_prepare(*w_.reference, "reference", p);
    if (!sent) return sent.error();
    ExecOutcome& out = *sent;
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return make_error(out.detail);
    }
    reference_.open = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (c.skipped) return make_error("skipped: " + c.error);
    if (!c.error.empty()) return make_error(c.error);
    return Ok{};
  }

  Expected<SealedBlob> reference_buffers(const SealedBlob* other) {
    if (auto s = prepare_reference(); !s) return s.error();
    ExecOutcome out = exec(*w_.reference, "reference", {{"cmd", "call"}, {"session", "reference"}, {"witnessed", false}},
                           limits_.call_timeout, other ? other->fd() : -1);
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return make_error(out.detail);
    }
    if (out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (!c.error.empty()) return make_error(c.error);
    if (!c.left_behind.empty()) return make_error("the call " + c.left_behind);
    auto blob = SealedBlob::adopt(std::move(out.fd), buffers_layout(*c_).total);
    if (!blob) return make_error(blob.error().message);
    if (auto e = reference_unwritten(*c_, CallBuffersView(*c_, *blob)); !e.empty()) return make_error(e);
    return blob;
  }

  std::optional<TestResult> reference() {
    enter("reference_s");
    if (device_case_) return reference_on_device();
    if ((expected_ = BlobCache::shared().find(expected_key()))) return std::nullopt;  // another implementation's test made it
    auto blob = reference_buffers(nullptr);
    if (!blob) {
      const std::string& m = blob.error().message;
      if (m.rfind("skipped: ", 0) == 0) return finish(Verdict::skipped, "reference: " + m.substr(9));
      return finish(Verdict::error, "reference: " + m);
    }
    expected_ = BlobCache::shared().keep(expected_key(), std::move(*blob));
    return std::nullopt;
  }

  // A device case's reference: its call on the inputs its worker made, its buffers kept on the
  // device for the checker (check()).
  std::optional<TestResult> reference_on_device() {
    if (auto s = prepare_reference(); !s) {
      const std::string& m = s.error().message;
      if (m.rfind("skipped: ", 0) == 0) return finish(Verdict::skipped, "reference: " + m.substr(9));
      return finish(Verdict::error, "reference: " + m);
    }
    CallRequest keep;
    keep.witnessed = false;
    keep.return_buffers = false;
    nlohmann::json request = to_json(keep);
    request["session"] = "reference";
    ExecOutcome out = exec(*w_.reference, "reference", request, limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return finish(Verdict::error, "reference: " + out.detail);
    }
    if (out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (c.unsupported && c.left_behind.empty())
      return finish(Verdict::skipped, "the reference does not support this case: " + c.error.substr(c.error.find(": ") + 2));
    if (!c.error.empty()) return finish(Verdict::error, "reference: " + c.error);
    if (!c.left_behind.empty()) return finish(Verdict::error, "reference: the call " + c.left_behind);
    return std::nullopt;
  }

  // One call of the implementation on its session's buffers; `other`: inputs other than the
  // case's. Its worker's reply (with its buffers where `return_buffers`), or the test's verdict
  // in failed_.
  Expected<ExecOutcome> impl_call_reply(const SealedBlob* other, const std::string& prefix, const CallRequest& how) {
    nlohmann::json request = to_json(how);
    request["session"] = "impl";
    auto out = ask_impl(request, limits_.call_timeout, other ? other->fd() : -1);
    if (!out) return make_error("");
    const CallReply c = CallReply::from_json(out->reply);
    if (c.unsupported && !first_call_returned_ && c.left_behind.empty() && !c.outside) {
      // Its first call on this case: it does not support it. SKIPPED with its message, unless
      // the preconditions it declares admit the case; a later call that says so is an ERROR (it
      // supported the case before).
      failed_ = req_.declared_supported
                    ? finish(Verdict::error, fmt::format("{}: its declared preconditions admit this case", c.error))
                    : refusal("unsupported by the implementation: " + c.error.substr(c.error.find(": ") + 2));
      return make_error("");
    }
    if (!c.error.empty() || !c.left_behind.empty() || c.outside) {
      failed_ = call_failure(c, prefix);
      return make_error("");
    }
    first_call_returned_ = true;
    if (!c.changed_after_return.empty()) {
      failed_ = finish(Verdict::fail, prefix + c.changed_after_return);
      return make_error("");
    }
    return out;
  }
  // The same, with its buffers.
  Expected<SealedBlob> impl_call(const SealedBlob* other, const std::string& prefix) {
    auto out = impl_call_reply(other, prefix, CallRequest{});
    if (!out) return make_error("");
    auto blob = SealedBlob::adopt(std::move(out->fd), buffers_layout(*c_).total);
    if (!blob) {
      failed_ = finish(Verdict::error, prefix + "its buffers: " + blob.error().message);
      return make_error("");
    }
    return blob;
  }

  // The host's judgement of the test's first call, its error figures kept for the result.
  std::optional<Judgement> judge_first_call(const SealedBlob& got, const SealedBlob& inputs, const SealedBlob& want) {
    ErrorFigures figures;
    auto j = judge_call(*c_, CallBuffersView(*c_, got), inputs, CallBuffersView(*c_, want), &figures);
    if (!figures.output.empty()) r_.outcome.errors = figures;
    return j;
  }

  std::optional<TestResult> check() {
    enter("check_s");
    if (device_case_ && (device_check_ = watch())) return check_on_device();
    if (failed_) return failed_;  // the implementation's worker died while the checker was set up
    auto in = host_inputs();
    if (!in) return finish(Verdict::error, "inputs: " + in.error().message);
    auto want = host_expected();
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    auto got = impl_call(nullptr, "");
    if (!got) return failed_;
    const auto t0 = Clock::now();
    auto j = judge_first_call(*got, **in, **want);
    trace_host("judge", t0);
    if (j) {
      r_.outcome.mismatch = j->mismatch;
      return finish(j->verdict, j->message);
    }
    r_.outcome.zeros_pass = zeros_would_pass_all(*c_, CallBuffersView(*c_, **want));
    first_ = std::move(*got);
    return std::nullopt;
  }

  // A device case's first call, compared by the checker with the reference's buffers kept on the
  // device. A "no" brings the buffers home, with the case's inputs and the reference's buffers
  // made on the host, for the host's verdict and message: the device never passes a call the
  // host would fail, and a call it failed is never PASS.
  std::optional<TestResult> check_on_device() {
    CallRequest keep;
    keep.return_buffers = false;
    if (!impl_call_reply(nullptr, "", keep)) return failed_;
    auto t0 = Clock::now();
    ExecOutcome out = exec(*w_.checker, "checker", {{"cmd", "verify"}, {"figures", true}}, limits_.call_timeout);
    const bool answered = checker_ok(out);
    trace_host("check_on_device", t0);
    if (answered && out.reply.value("ok", false)) {
      r_.outcome.zeros_pass = out.reply.value("zeros_pass", false);
      if (auto e = out.reply.find("errors"); e != out.reply.end() && e->is_object()) r_.outcome.errors = e->get<ErrorFigures>();
      return std::nullopt;
    }
    if (!answered) device_check_ = false;
    auto home = ask_impl({{"cmd", "buffers"}, {"session", "impl"}}, limits_.call_timeout);
    if (!home) return failed_;
    auto in = host_inputs();
    if (!in) return finish(Verdict::error, "inputs: " + in.error().message);
    auto want = host_expected();
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    auto got = SealedBlob::adopt(std::move(home->fd), buffers_layout(*c_).total);
    if (!got) return finish(Verdict::error, "its buffers: " + got.error().message);
    if (auto j = judge_first_call(*got, **in, **want)) {
      r_.outcome.mismatch = j->mismatch;
      return finish(j->verdict, j->message);
    }
    if (!answered) return std::nullopt;
    return finish(Verdict::fail, fmt::format("on the device, {}; its buffers sent afterwards agree: they changed after the check",
                                             out.reply.value("why", "they differ")));
  }

  std::optional<TestResult> determinism() {
    if (!req_.check_determinism) return std::nullopt;
    auto again = impl_call(nullptr, "second call: ");
    if (!again) return failed_;
    if (auto e = outputs_not_identical(*c_, CallBuffersView(*c_, *again), CallBuffersView(*c_, first_)); !e.empty())
      return finish(Verdict::nondeterministic, e);
    return std::nullopt;
  }

  // ---- timing
  // The buffers after a call (a block's last, or a checked call): its outputs must be the
  // reference's (`expected`), its inputs as they were (`inputs`), its guards whole. "" when so.
  std::string check_buffers(UniqueFd fd, const SealedBlob& inputs, const SealedBlob& expected) {
    auto blob = SealedBlob::adopt(std::move(fd), buffers_layout(*c_).total);
    if (!blob) return "its buffers: " + blob.error().message;
    if (auto j = judge_call(*c_, CallBuffersView(*c_, *blob), inputs, CallBuffersView(*c_, expected))) return j->message;
    return "";
  }

  // A checked call on other inputs, placed among the timed blocks where the host's secret says.
  std::optional<TestResult> checked_call(int which) {
    const bool sparse = which > 0;
    const std::string salt = fmt::format("checked{}", which);
    if (auto on_device = checked_on_device(salt, sparse)) {
      if (failed_) return failed_;
      if (on_device->empty()) return std::nullopt;
      return finish(Verdict::fail, fmt::format("wrong while timed: a call on {} between two timed blocks: {}",
                                               sparse ? "the case's inputs with a few elements changed" : "fresh input values", *on_device));
    }
    auto t0 = Clock::now();
    auto other = inputs_blob(salt, secret_, sparse);
    if (!other) return finish(Verdict::error, "other inputs: " + other.error().message);
    trace_host("checked_inputs", t0);
    t0 = Clock::now();
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    trace_host("checked_freeze", t0);
    t0 = Clock::now();
    auto want = reference_buffers(&*other);
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    trace_host("checked_reference", t0);
    t0 = Clock::now();
    const std::string prefix = "while timed, a checked call on other inputs: ";
    std::string why;
    if (expect(&*want)) {  // compared on the device where the checker watches the case: no buffers come home
      CallRequest keep;
      keep.return_buffers = false;
      if (!impl_call_reply(&*other, prefix, keep)) return failed_;
      trace_host("checked_impl", t0);
      t0 = Clock::now();
      why = verify_on_device(*other, *want);
      if (failed_) return failed_;
      expect(nullptr);  // the case's buffers again, for the blocks to come
      trace_host("checked_compare", t0);
    } else {
      auto got = impl_call(&*other, prefix);
      if (!got) return failed_;
      trace_host("checked_impl", t0);
      t0 = Clock::now();
      why = outputs_differ(*c_, CallBuffersView(*c_, *got), CallBuffersView(*c_, *want));
      trace_host("checked_compare", t0);
    }
    if (!why.empty())
      return finish(Verdict::fail, fmt::format("wrong while timed: a call on {} between two timed blocks: {}",
                                               sparse ? "the case's inputs with a few elements changed" : "fresh input values", why));
    return std::nullopt;
  }

  // Inputs as a worker makes them on its device: what inputs_blob makes on the host for (salt,
  // secret, sparse), seed for seed and, through the shared generators, bit for bit (salt "": the
  // case's). nullopt where an input cannot be made there (.npy).
  std::optional<std::vector<InputRecipe>> input_recipes(const std::string& salt, uint64_t secret, bool sparse) const {
    std::vector<InputRecipe> recipes;
    for (const auto& t : c_->inputs) {
      const uint64_t seed = salt.empty() ? mix_seed(c_->seed, t.name) : mix_seed(secret, salt + ":" + t.name);
      auto in = input_recipe(t, seed);
      if (!in) return std::nullopt;
      const auto n = static_cast<uint64_t>(t.numel());
      in->scatter = sparse ? std::max<uint64_t>(1, n / kSparseEvery) : 0;
      recipes.push_back(*in);
    }
    return recipes;
  }

  // The checker maps the reference's buffers, once per test (checked_on_device).
  bool watch_reference() {
    if (reference_watched_) return true;
    if (!prepare_reference()) return false;
    const BlobLayout l = buffers_layout(*c_);
    for (int k = 0; k < mirror_count(*c_); ++k) {
      ExecOutcome out = exec(*w_.reference, "reference", {{"cmd", "export"}, {"session", "reference"}, {"mirror", k}}, limits_.call_timeout);
      if (out.status != ExecOutcome::Status::ok) {
        reference_.fatal = true;
        return false;
      }
      if (!out.reply.value("error", "").empty() || !out.fd) return false;  // not shareable: the host carries the checked calls
      out = exec(*w_.checker, "checker",
                 {{"cmd", "watch_reference"}, {"mirror", k}, {"bytes", out.reply.value("bytes", std::size_t{0})},
                  {"offset", l.offsets[static_cast<size_t>(k)]}, {"size", l.sizes[static_cast<size_t>(k)]}},
                 limits_.call_timeout, out.fd.get());
      if (!checker_ok(out)) return false;
    }
    reference_watched_ = true;
    return true;
  }

  // A checked call made and compared on the device, where the checker watches the case and the
  // reference runs on the same device (device_check.hpp): the reference's worker makes the call's
  // inputs from the host's secret and calls the reference; the checker copies those inputs into
  // the implementation's buffers and, after its call, compares. Nothing crosses to the host but a
  // "no", whose inputs and reference buffers the host then makes itself, for its own judgement.
  // nullopt where it cannot be done (the host's blobs carry the call); else "" or why it was wrong.
  std::optional<std::string> checked_on_device(const std::string& salt, bool sparse) {
    const bool in_place = std::any_of(c_->outputs.begin(), c_->outputs.end(), [](const ConcreteOutput& o) { return o.inplace_input >= 0; });
    // A reference library only, as for a device case (plan_checks): its buffers are compared with unseen.
    if (!device_check_ || !stage_on_device_ || in_place || req_.reference_device != req_.device ||
        req_.reference.kind != Target::Kind::reference)
      return std::nullopt;
    const auto recipes = input_recipes(salt, secret_, sparse);
    auto t0 = Clock::now();
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    if (!recipes || !watch_reference()) {
      stage_on_device_ = false;
      return std::nullopt;
    }
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    CallRequest reference;
    reference.witnessed = false;
    reference.return_buffers = false;
    reference.generate = *recipes;
    nlohmann::json request = to_json(reference);
    request["session"] = "reference";
    ExecOutcome out = exec(*w_.reference, "reference", request, limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok || out.reply.value("fatal", false)) reference_.fatal = true;
    if (out.status != ExecOutcome::Status::ok || !CallReply::from_json(out.reply).error.empty() || !CallReply::from_json(out.reply).left_behind.empty()) {
      stage_on_device_ = false;  // the host's blobs say what went wrong
      return std::nullopt;
    }
    out = exec(*w_.checker, "checker", {{"cmd", "stage"}, {"inputs", c_->inputs.size()}}, limits_.call_timeout);
    if (!checker_ok(out)) {
      stage_on_device_ = false;
      return std::nullopt;
    }
    trace_host("checked_staged", t0);
    t0 = Clock::now();
    CallRequest impl;
    impl.staged = true;
    impl.return_buffers = false;
    if (!impl_call_reply(nullptr, "while timed, a checked call on other inputs: ", impl)) return "";  // failed_ says why
    trace_host("checked_impl", t0);
    t0 = Clock::now();
    std::string why = verify_on_device([&](UniqueFd home) -> std::string {
      auto other = inputs_blob(salt, secret_, sparse);  // the same values, made on the host
      if (!other) {
        failed_ = finish(Verdict::error, "other inputs: " + other.error().message);
        return "";
      }
      auto want = reference_buffers(&*other);
      if (!want) {  // no judgement without the reference: never a pass
        failed_ = finish(Verdict::error, "reference: " + want.error().message);
        return "";
      }
      return check_buffers(std::move(home), *other, *want);
    });
    if (failed_) return "";
    expect(nullptr);  // the case's buffers again, for the blocks to come
    trace_host("checked_compare", t0);
    return why;
  }

  // The checker watches the implementation's buffers against the reference's: true when it does.
  bool watch() {
    if (watch_tried_) return device_check_;
    watch_tried_ = true;
    if (!checks_ || (!device_case_ && !expected_)) return false;
    ExecOutcome out = exec(*w_.checker, "checker",
                           {{"cmd", "watch"}, {"device", req_.device}, {"device_index", req_.device_index}, {"checks", to_json(*checks_)},
                            {"expected_bytes", buffers_layout(*c_).total}},
                           limits_.call_timeout, device_case_ ? -1 : expected_->fd());
    if (!checker_ok(out)) return false;
    checker_.open = true;
    for (int k = 0; k < mirror_count(*c_); ++k) {
      auto exported = ask_impl({{"cmd", "export"}, {"session", "impl"}, {"mirror", k}}, limits_.call_timeout);
      if (!exported) return false;  // its worker died: the test's verdict is set
      if (!exported->reply.value("error", "").empty() || !exported->fd) return false;
      out = exec(*w_.checker, "checker", {{"cmd", "watch_mirror"}, {"mirror", k}, {"bytes", exported->reply.value("bytes", std::size_t{0})}},
                 limits_.call_timeout, exported->fd.get());
      if (!checker_ok(out)) return false;
    }
    if (device_case_) {  // the case's reference buffers, from the reference's device memory
      if (!watch_reference()) return false;
      out = exec(*w_.checker, "checker", {{"cmd", "keep_case"}}, limits_.call_timeout);
      if (!checker_ok(out)) return false;
    }
    return true;
  }
  bool checker_ok(const ExecOutcome& out) {
    if (out.status != ExecOutcome::Status::ok) {
      checker_.fatal = true;
      return false;
    }
    return out.reply.value("error", "").empty();
  }

  // The checker compares with `b` (a checked call's buffers) from now on, or with the case's
  // buffers again (kept on its device since watch()) where `b` is null. False when it cannot:
  // the blocks then come home to be judged here.
  bool expect(const SealedBlob* b) {
    if (!device_check_) return false;
    ExecOutcome out = exec(*w_.checker, "checker", {{"cmd", "expect"}}, limits_.call_timeout, b ? b->fd() : -1);
    if (checker_ok(out)) return true;
    device_check_ = false;
    return false;
  }

  // After a call checked on the device (a block's last, or a checked call on `inputs`, whose
  // reference's buffers are `expected`): "" when the checker found it right. A "no", or a
  // checker that cannot say, brings the buffers home for the host's judgement; and a call the
  // device found wrong is never right because its buffers changed since.
  std::string verify_on_device(const SealedBlob& inputs, const SealedBlob& expected) {
    return verify_on_device([&](UniqueFd home) { return check_buffers(std::move(home), inputs, expected); });
  }
  // The same, where `judge` judges the buffers brought home (a staged checked call's inputs and
  // reference buffers are made on the host only then).
  template <typename Judge>
  std::string verify_on_device(Judge judge) {
    ExecOutcome out = exec(*w_.checker, "checker", {{"cmd", "verify"}}, limits_.call_timeout);
    const bool answered = checker_ok(out);
    if (answered && out.reply.value("ok", false)) return "";
    if (!answered) device_check_ = false;  // the rest of the blocks come home
    auto home = ask_impl({{"cmd", "buffers"}, {"session", "impl"}}, limits_.call_timeout);
    if (!home) return "its worker died while sending its buffers";
    if (std::string why = judge(std::move(home->fd)); !why.empty()) return why;
    if (!answered) return "";
    return fmt::format("on the device, {}; its buffers sent afterwards agree: they changed after the check", out.reply.value("why", "they differ"));
  }

  // The buffers a timed sample on fresh inputs left (fresh_inputs.hpp), against the reference's
  // for the same inputs, made here again from the sample's seed: "" when right. No judgement without
  // the reference is never a pass (failed_ is set).
  std::string judge_fresh(const FreshInputs::Kept& kept) {
    auto t0 = Clock::now();
    auto in = fresh_->inputs_of(kept.seed);
    if (!in) {
      failed_ = finish(Verdict::error, "fresh inputs: " + in.error().message);
      return "";
    }
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    auto want = reference_buffers(&*in);
    if (!want) {
      failed_ = finish(Verdict::error, "reference: " + want.error().message);
      return "";
    }
    trace_host("fresh_reference", t0);
    t0 = Clock::now();
    std::string why;
    if (auto j = judge_call(*c_, CallBuffersView(*c_, kept.buffers), *in, CallBuffersView(*c_, *want))) why = j->message;
    trace_host("fresh_compare", t0);
    return why;
  }

  // A call's inputs (inputs_layout) out of its buffers (buffers_layout: each between its guards).
  Expected<SealedBlob> inputs_of_buffers(const SealedBlob& buffers) const {
    const BlobLayout from = buffers_layout(*c_), to = inputs_layout(*c_);
    if (buffers.size() < from.total) return make_error("its buffers are too small");
    return SealedBlob::create(to.total, [&](uint8_t* p) {
      for (std::size_t i = 0; i < c_->inputs.size(); ++i)
        std::memcpy(p + to.offsets[i], buffers.data() + from.offsets[i] + HostBuffer::kGuardBytes, c_->inputs[i].nbytes());
    }, "bb-fresh-inputs");
  }

  // A timed sample on fresh inputs that the checker kept on the device (fresh_inputs_protocol.hpp),
  // against the reference's for the same inputs: the reference's worker makes them from the
  // sample's seed on its device and calls the reference; the checker compares. "" when right. A
  // "no" brings the kept buffers home, and the reference's (its inputs and outputs) again, and
  // the host judges (its message). No judgement is never a pass (failed_ is set).
  std::string judge_fresh_on_device(const FreshInputs::Kept& kept) {
    auto t0 = Clock::now();
    auto recipes = input_recipes("fresh", kept.seed, false);
    if (!recipes) {  // a device case's inputs all have a generator there (plan_checks)
      failed_ = finish(Verdict::error, "fresh inputs: the kept sample's inputs cannot be made on the device");
      return "";
    }
    for (auto& r : *recipes) r.fresh = true;  // as the worker made them: the device's fresh generator
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    CallRequest reference;
    reference.witnessed = false;
    reference.return_buffers = false;
    reference.generate = recipes;
    nlohmann::json request = to_json(reference);
    request["session"] = "reference";
    ExecOutcome out = exec(*w_.reference, "reference", request, limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok || out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply made = CallReply::from_json(out.reply);
    if (out.status != ExecOutcome::Status::ok || !made.error.empty() || !made.left_behind.empty()) {
      failed_ = finish(Verdict::error, "fresh inputs: the reference on the kept sample's inputs: " +
                                           (out.status != ExecOutcome::Status::ok ? out.detail : made.error.empty() ? "the call " + made.left_behind : made.error));
      return "";
    }
    trace_host("fresh_reference", t0);
    t0 = Clock::now();
    // Compared with the reference's buffers as its call left them, then the case's again.
    out = exec(*w_.checker, "checker", {{"cmd", "verify_kept"}}, limits_.call_timeout);
    const bool answered = checker_ok(out);
    const bool right = answered && out.reply.value("ok", false);
    std::string why;
    if (!right) {  // home, for the host's own judgement and message
      // The inputs and the reference's outputs as the reference's worker made them on the device
      // (the host has not the device's fresh generator), beside the kept sample's buffers.
      ExecOutcome home = exec(*w_.checker, "checker", {{"cmd", "kept_home"}}, limits_.call_timeout);
      reference.return_buffers = true;
      request = to_json(reference);
      request["session"] = "reference";
      ExecOutcome again = exec(*w_.reference, "reference", request, limits_.call_timeout);
      Expected<SealedBlob> want = make_error("its worker sent no buffers");
      if (again.status == ExecOutcome::Status::ok && again.fd) want = SealedBlob::adopt(std::move(again.fd), buffers_layout(*c_).total);
      auto in = want ? inputs_of_buffers(*want) : Expected<SealedBlob>(want.error());
      if (!checker_ok(home) || !home.fd || !in) {
        failed_ = finish(Verdict::error, "fresh inputs: the kept sample could not be judged: " +
                                             (!in ? "the reference: " + in.error().message : home.reply.value("error", home.detail)));
        return "";
      }
      why = check_buffers(std::move(home.fd), *in, *want);
      if (why.empty() && answered) why = "on the device, " + out.reply.value("why", std::string("they differ"));
    }
    if (!answered) expect(nullptr);  // the case's buffers again, for the blocks to come (or the blocks come home)
    trace_host("fresh_compare", t0);
    return why;
  }

  // One block of one side (paired_timer.hpp's callback).
  Expected<Measurement> block(bool baseline, const TimingOptions& options) {
    Executor& side = baseline ? *w_.baseline : *w_.impl;
    const auto freezing = Clock::now();
    if (!baseline) {
      if (checked_before_.count(impl_blocks_.size()))
        if (auto failed = checked_call(checked_calls_++)) {
          failed_ = *failed;
          return make_error("checked call");
        }
      use_impl_side();
    } else {
      use_baseline_side();
    }
    if (pairing_.active())
      pairing_.before_block(w_.impl->tasks(), w_.baseline->tasks(), !impl_blocks_.empty() && !base_blocks_.empty(), impl_blocks_.size());
    const double freeze_seconds = std::chrono::duration<double>(Clock::now() - freezing).count();
    const char* session = baseline ? "baseline" : "impl";
    // A side's first block, unpinned: the cores it keeps busy (cpu_pairing.hpp).
    const bool first_unpinned = pairing_.measuring_first_load((baseline ? base_blocks_ : impl_blocks_).empty());
    const double cpu_before = first_unpinned ? cpu_seconds(side.tasks().processes) : 0;
    // Both sides return their buffers, though only the implementation's are checked: the clock
    // audit compares the two sides' blocks, which must cost the same to serve.
    const std::string device = fmt::format("{}:{}", req_.device, req_.device_index);
    TimingOptions timing = options;
    timing.device_warm = !is_cpu(req_.device) && DeviceActivity::shared().warm(device);
    // CPU timing: what the machine's other work took from the worker in this block (the clock
    // audit leaves it out; run_queue.hpp). Device timing's slack per call is far larger.
    const bool on_cpu = is_cpu(req_.device);
    const RunQueueSnapshot queued = on_cpu ? run_queue_snapshot(side.tasks(), side.group_cpu_seconds()) : RunQueueSnapshot{};
    const double host_wait_before = on_cpu ? own_thread_wait() : 0;
    if (fresh_) {  // fresh inputs for every sample, made here (fresh_inputs.hpp)
      std::string e = fresh_->attached(baseline) ? "" : fresh_->attach(baseline, side, session, limits_.call_timeout);
      // A device case's samples are kept by the checker, which maps the implementation's buffers
      // (not the baseline's: its side keeps none). Called from the pacing thread: the checker's
      // channel alone, nothing of the driver's.
      FreshInputs::KeepOnDevice keep;
      const bool keeping = req_.check && (!fresh_on_device_ || !baseline);
      if (fresh_on_device_ && keeping)
        keep = [this](std::size_t) -> std::string {
          ExecOutcome o = w_.checker->execute({{"cmd", "keep_sample"}}, limits_.call_timeout, -1);
          if (o.status != ExecOutcome::Status::ok) return "the checker: " + o.detail;
          return o.reply.value("error", "");
        };
      if (e.empty()) e = fresh_->begin(baseline, keeping, pairing_.cpu_for_block(), std::move(keep));
      if (!e.empty()) {
        if (baseline) return make_error("baseline: fresh inputs: " + e);
        failed_ = finish(Verdict::error, "while timing: fresh inputs: " + e);
        return make_error("block");
      }
    }
    ExecOutcome out = side.execute(
        {{"cmd", "block"}, {"session", session}, {"timing", to_json(timing)}, {"return_buffers", !device_check_ && !fresh_}},
        block_timeout(options));
    std::optional<FreshInputs::Kept> fresh_kept;
    std::optional<FreshInputs::Served> served;
    // The clock audit takes the block's whole time, the host's making of inputs in it: the worker
    // is to be idle then, and what it does meanwhile on the pairing's core delays the host's
    // answer; the baseline's blocks carry the same making (docs/RELIABILITY.md, limits).
    if (fresh_) {
      served = fresh_->end(baseline);
      r_.phases.seconds["fresh_inputs_s"] += served->make_seconds;
      if (!served->error.empty() && out.status == ExecOutcome::Status::ok) {
        if (baseline) return make_error("baseline: fresh inputs: " + served->error);
        failed_ = finish(Verdict::error, "while timing: fresh inputs: " + served->error);
        return make_error("block");
      }
      if (!baseline) fresh_kept = std::move(served->kept);
    }
    // The checker's copies of a kept sample are the host's (its worker waits, as it does while
    // the host makes a CPU sample's inputs), and the baseline's side has none: out of the audit.
    if (served) out.seconds = std::max(0.0, out.seconds - served->keep_seconds);
    host_wait_ = on_cpu ? own_thread_wait() - host_wait_before : 0;
    const double waited = on_cpu ? foreign_wait(queued, run_queue_snapshot(side.tasks(), side.group_cpu_seconds()), host_wait_) : 0;
    if (!is_cpu(req_.device)) DeviceActivity::shared().timed(device);
    if (first_unpinned && out.seconds > 0) pairing_.note_first_load(baseline, (cpu_seconds(side.tasks().processes) - cpu_before) / out.seconds);
    if (!baseline) keep_output(out);
    if (out.status != ExecOutcome::Status::ok) {
      if (baseline) {
        baseline_.fatal = true;
        return make_error("baseline: its worker: " + out.detail);
      }
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      failed_ = finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout, "while timing: " + out.detail);
      return make_error("worker");
    }
    if (out.reply.value("fatal", false)) (baseline ? baseline_.fatal : impl_.fatal) = true;
    if (!baseline)
      if (std::string t = out.reply.value("tampered", ""); !t.empty()) {
        failed_ = finish(Verdict::implausible, fmt::format("its worker's own code changed while timed (block {}): {}", impl_blocks_.size() + 1, t));
        return make_error("block");
      }
    const CallReply c = CallReply::from_json(out.reply);
    if (!c.error.empty() || !c.left_behind.empty()) {
      if (baseline) return make_error("baseline: " + (c.error.empty() ? "the calls " + c.left_behind : c.error));
      failed_ = c.sticky ? finish(Verdict::crash, "while timing: " + c.error)
                         : finish(Verdict::error, "while timing: " + (c.error.empty() ? "the calls " + c.left_behind : c.error));
      return make_error("block");
    }
    Measurement m = measurement_from_json(out.reply.value("measurement", nlohmann::json::object()));
    if (fresh_on_device_) r_.phases.seconds["fresh_inputs_s"] += m.fresh_seconds;  // its worker's waits for each go, and its making
    if (m.samples.empty()) {
      if (baseline) return make_error("baseline: a block without samples");
      failed_ = finish(Verdict::error, "while timing: its worker reported a block without samples");
      return make_error("block");
    }
    // Every sample it reports is one the host paced, on inputs made for it, and the block ended as
    // the protocol ends it: samples run on other inputs (a cache's hits between two paced ones)
    // are not its to report.
    // A device sample the clock throttled is paced and dropped (measurement.hpp): never more
    // reported than paced.
    const bool paced_right = !served || (fresh_on_device_ ? m.paced == served->samples && m.samples.size() <= m.paced : served->samples == m.samples.size());
    if (served && (!paced_right || m.batch != 1 || !served->saw_last)) {
      const std::string why = fmt::format("its worker reported {} samples of {} call(s) each; the host made inputs for {}{}", m.samples.size(),
                                          m.batch, served->samples, served->saw_last ? "" : ", and was not told the block's last had ended");
      if (baseline) return make_error("baseline: fresh inputs: " + why);
      failed_ = finish(Verdict::implausible, fmt::format("while timing, block {} on fresh inputs: {}", impl_blocks_.size() + 1, why));
      return make_error("block");
    }
    const auto checking = Clock::now();
    if (!baseline && req_.check && fresh_) {
      if (!fresh_kept) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: block {} kept no buffers of its samples on fresh inputs for the host", impl_blocks_.size() + 1));
        return make_error("block");
      }
      const std::string why = fresh_on_device_ ? judge_fresh_on_device(*fresh_kept) : judge_fresh(*fresh_kept);
      if (failed_) return make_error("block");
      if (!why.empty()) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: sample {} of block {}, on fresh inputs: {}", fresh_kept->sample + 1,
                                                    impl_blocks_.size() + 1, why));
        return make_error("block");
      }
    } else if (!baseline && req_.check && (device_case_ || (expected_ && !expected_->empty()))) {
      auto judge_home = [&](UniqueFd home) -> std::string {
        auto in = host_inputs();
        if (!in) {
          failed_ = finish(Verdict::error, "inputs: " + in.error().message);
          return "";
        }
        auto want = host_expected();
        if (!want) {  // no judgement without the reference: never a pass
          failed_ = finish(Verdict::error, "reference: " + want.error().message);
          return "";
        }
        return check_buffers(std::move(home), **in, **want);
      };
      const std::string why = device_check_ && !out.fd ? verify_on_device(judge_home) : judge_home(std::move(out.fd));
      if (failed_) return make_error("block");  // its worker died meanwhile, or no judgement could be made
      if (!why.empty()) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: after the last timed call of block {}: {}", impl_blocks_.size() + 1, why));
        return make_error("block");
      }
    }
    // A CPU block on fresh inputs is audited sample by sample (clock_audit.hpp, audit_paced).
    std::vector<double> paced = served && on_cpu ? std::move(served->paced_seconds) : std::vector<double>{};
    (baseline ? base_blocks_ : impl_blocks_).push_back({out.seconds, waited, m, std::move(paced)});
    trace_block(baseline, m, out.seconds, waited, std::chrono::duration<double>(Clock::now() - checking).count(), freeze_seconds,
                out.reply.value("steps", nlohmann::json::object()));
    return m;
  }

  // The implementation's worker checks its own code, GOT and read-only data against what they
  // were before the plugin loaded (worker_integrity.hpp): a clock or timer rewritten and put
  // back between the blocks' checks still shows in the code or data it left changed.
  std::optional<TestResult> audit_worker() {
    ExecOutcome out = exec(*w_.impl, "impl", {{"cmd", "audit"}}, limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok) {
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      return finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout,
                    "after timing, at the audit of its worker's own code: " + out.detail);
    }
    if (out.reply.value("fatal", false)) impl_.fatal = true;
    if (std::string t = out.reply.value("tampered", ""); !t.empty())
      return finish(Verdict::implausible, "its worker's own code changed while timed: " + t);
    return std::nullopt;
  }

  // BACKENDBENCH_TRACE_BLOCKS (trace.hpp): this test's lines carry its implementation and case.
  void trace(nlohmann::json line) const {
    if (!tracing()) return;
    line["impl"] = req_.impl.library;
    line["case"] = c_ ? c_->id : "";
    line["slot"] = fmt::format("{}:{}", req_.device, req_.device_index);
    trace_line(std::move(line));
  }
  void trace_block(bool baseline, const Measurement& m, double host_seconds, double waited, double check_seconds, double freeze_seconds,
                   const nlohmann::json& steps) const {
    if (!tracing()) return;
    trace({{"side", baseline ? "baseline" : "impl"}, {"cmd", "block"},
           {"block", (baseline ? base_blocks_ : impl_blocks_).size()},
           {"median_s", m.stats.median}, {"samples", m.samples.size()}, {"batch", m.batch},
           {"host_s", host_seconds}, {"foreign_wait_s", waited}, {"host_wait_s", host_wait_}, {"check_s", check_seconds}, {"freeze_s", freeze_seconds}, {"measured_s", m.measured_time},
           {"clock_mhz", m.clock_mhz}, {"worker_steps", steps}, {"host_median_s", m.host.median}, {"paced_samples", m.paced},
           {"fresh_s", m.fresh_seconds}, {"paced_s", (baseline ? base_blocks_ : impl_blocks_).back().paced},
           {"pinned", pairing_.pinned()}});
  }

  double block_timeout(const TimingOptions& o) const { return limits_.call_timeout + 4 * o.rule.timeout + o.warmup_time; }

  std::optional<TestResult> measure() {
    enter("timing_s");
    if (w_.quiet) w_.quiet();  // the next implementation's worker, started ahead, is ready first
    timing_ = true;
    // Where the checked calls go: the host's secret, drawn now, known to no worker.
    std::random_device rd;
    secret_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    std::mt19937_64 draw(secret_);
    // Fresh inputs for every timed sample of a CPU case (fresh_inputs.hpp): where some input can
    // vary, in cold timing, with its outputs checked. The inputs that cannot vary say so.
    // A device case's (made there, its buffers mapped by the checker, the reference's too) are made
    // by its workers on the device from a seed per sample; the checker keeps one in secret.
    const bool fresh_wanted = req_.timing.mode == TimingMode::cold && req_.check && !sandbox_part_off("fresh");
    if (fresh_wanted && (is_cpu(req_.device) || (device_case_ && device_check_ && watch_reference()))) {
      const std::vector<std::string> repeating = repeating_inputs(*c_);
      fresh_on_device_ = !is_cpu(req_.device);
      if (repeating.size() < c_->inputs.size()) fresh_ = std::make_unique<FreshInputs>(*c_, data_->manifest.dir(), fresh_on_device_);
      if (!repeating.empty())
        fresh_note_ = fmt::format("inputs repeat: {} keep{} {} values in every timed call (constant, arange or a file)", fmt::join(repeating, ", "),
                                  repeating.size() == 1 ? "s" : "", repeating.size() == 1 ? "its" : "their");
    } else if (fresh_wanted) {
      fresh_note_ = "inputs repeat: a block's timed calls all run on the case's inputs (fresh inputs for every sample need the case on its "
                    "device, checked there: a reference on the same device, floating outputs, no .npy input, no in-place output)";
    }
    BlockStop stop = block_stop(req_.timing);
    while (req_.check && checked_before_.size() < static_cast<std::size_t>(std::min<std::size_t>(kCheckedCalls, stop.min_blocks - 1)))
      checked_before_.insert(1 + draw() % (stop.min_blocks - 1));
    for (std::size_t window = stop.min_blocks; req_.check && window < stop.max_blocks; window += stop.min_blocks)
      checked_before_.insert(window + draw() % stop.min_blocks);

    std::string pairing_note;
    if (req_.baseline && (!w_.baseline || req_.baseline->kind == Target::Kind::identity))
      pairing_note = "baseline: an identity baseline cannot be timed";
    bool paired = req_.baseline && pairing_note.empty();
    if (paired) {
      use_baseline_side();
      auto sent = send_prepare(*w_.baseline, "baseline", prepare_request("baseline", *req_.baseline, req_.device));
      if (!sent) return finish(Verdict::error, "inputs: " + sent.error().message);
      ExecOutcome& out = *sent;
      const CallReply c = CallReply::from_json(out.reply);
      if (out.status != ExecOutcome::Status::ok) baseline_.fatal = true, pairing_note = "baseline: its worker: " + out.detail;
      else if (!c.error.empty()) pairing_note = "baseline: " + c.error;
      else baseline_.open = true;
      paired = pairing_note.empty();
    }
    device_check_ = watch();
    if (failed_) return *failed_;
    Measurement meas;
    double baseline_measured = 0;
    auto alone = [&]() -> std::optional<TestResult> {
      impl_blocks_.clear();
      auto m = measure_blocks([&](const TimingOptions& o) { return block(false, o); }, req_.timing, stop);
      if (!m) return failed_ ? *failed_ : finish(Verdict::error, "while timing: " + m.error().message);
      meas = std::move(*m);
      return std::nullopt;
    };
    if (!paired) {
      if (auto failed = alone()) return failed;
    } else {
      BlockStop paired_stop = stop;
      paired_stop.floor = kProcessFloor;  // two processes: docs/PERFORMANCE.md
      if (is_cpu(req_.device)) pairing_.begin();
      auto p = measure_paired([&](bool baseline, const TimingOptions& o) { return block(baseline, o); }, req_.timing, paired_stop);
      pinned_cpu_ = end_pairing();
      if (!p && failed_) return *failed_;
      if (!p) {
        // The baseline's fault, not the implementation's: timed alone, and the result says why
        // it has no speedup.
        pairing_note = p.error().message;
        base_blocks_.clear();
        if (auto failed = alone()) return failed;
      } else {
        meas = std::move(p->impl);
        baseline_measured = p->baseline.measured_time;
        r_.performance.baseline_median = p->baseline.stats.median;
        if (p->speedup)  // two processes: docs/PERFORMANCE.md
          p->speedup = widen_to_resolution(*p->speedup, p->baseline.stats.median, meas.stats.median, kProcessFloor);
        if (p->speedup) {
          r_.performance.speedup = p->speedup->speedup;
          r_.performance.speedup_low = p->speedup->low;
          r_.performance.speedup_high = p->speedup->high;
          r_.performance.speedup_confidence = p->speedup->confidence;
          r_.performance.speedup_pairs = static_cast<double>(p->speedup->pairs);
          r_.performance.speedup_resolution = p->speedup->resolution;
        }
      }
    }
    for (Executor* e : {w_.impl, w_.baseline})
      if (e) e->freeze(false);
    if (auto failed = audit_worker()) return failed;

    // What the host's own clock, the baseline's blocks and physics say of the reported times.
    TimingAudit audit;
    audit.options.device = !is_cpu(req_.device);
    audit.options.pinned = pinned_cpu_ >= 0;
    audit.cold = req_.timing.mode == TimingMode::cold;
    audit.median = meas.stats.median;
    audit.bytes = c_->bytes;
    audit.peak_bytes_per_second = limits_.peak_bytes_per_second;
    const std::optional<std::string> implausible = audit_timing(impl_blocks_, base_blocks_, audit);
    if (implausible) return finish(Verdict::implausible, *implausible);

    Timing t = timing_of(meas);
    t.baseline_measured_time = baseline_measured;
    if (fresh_) t.fresh_inputs = fresh_on_device_ ? "device" : "host";
    t.pinned_cpu = pinned_cpu_;
    if (!pairing_note.empty()) t.notes.push_back(pairing_note + ": no speedup");
    if (!pairing_.note().empty()) t.notes.push_back(pairing_.note());
    if (!fresh_note_.empty()) t.notes.push_back(fresh_note_);
    r_.performance.timing = t;
    const double med = meas.stats.median;
    if (med > 0 && c_->flops) r_.performance.tflops = *c_->flops / med / 1e12;
    if (med > 0 && c_->bytes) r_.performance.gbps = *c_->bytes / med / 1e9;
    return std::nullopt;
  }

  const TestRequest& req_;
  TestWorkers w_;
  DriverLimits limits_;
  TestResult r_;
  std::optional<TestResult> failed_;
  bool first_call_returned_ = false;  // the implementation returned from a call on this case (BB_ERR_UNSUPPORTED after that is an ERROR)
  Clock::time_point started_, phase_start_;
  const char* phase_ = "setup_s";
  const OpCases* data_ = nullptr;
  const ConcreteCase* c_ = nullptr;
  std::shared_ptr<const SealedBlob> inputs_, expected_;  // the case's, shared with other tests of the run (blob_cache.hpp)
  SealedBlob first_;
  // Each worker's standing in this test: its session open there (ended, or the checker's watch
  // ended, when the test ends), and whether its process is to be replaced instead (no word to it).
  struct WorkerState {
    bool open = false, fatal = false;
  };
  WorkerState impl_, reference_, baseline_, checker_;
  bool impl_crashed_ = false;  // its worker died: nothing to end
  uint64_t secret_ = 0;
  std::set<std::size_t> checked_before_;  // impl block indices preceded by a checked call
  std::optional<std::vector<DeviceCheckItem>> checks_;  // what the checker compares (device_check.hpp)
  bool device_check_ = false;  // the blocks are checked on the device now
  bool timing_ = false;  // measure() has begun: the workers it needs have started (use_impl_side)
  CpuPairing pairing_;   // a CPU pairing's one CPU
  int pinned_cpu_ = -1;  // the CPU the pairing ended pinned to, for the result
  bool stage_on_device_ = true, reference_watched_ = false;  // checked_on_device
  bool device_case_ = false;  // plan_checks
  bool watch_tried_ = false;
  int checked_calls_ = 0;
  std::unique_ptr<FreshInputs> fresh_;  // fresh inputs for every timed sample (measure())
  bool fresh_on_device_ = false;         // made on the device by the workers, kept by the checker
  std::string fresh_note_;
  std::vector<BlockRecord> impl_blocks_, base_blocks_;
  double host_wait_ = 0;  // this thread's run-queue wait in the last block (CPU timing)
};

}  // namespace

std::size_t default_device_check_min_bytes() {
  const char* v = std::getenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES");
  if (!v || !*v) return DriverLimits{}.device_check_min_bytes;
  if (std::strcmp(v, "off") == 0) return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

TestResult run_test(const TestRequest& req, const TestWorkers& workers, const DriverLimits& limits) {
  return TestDriver(req, workers, limits).run();
}

TestResult run_test_in_process(const TestRequest& req) {
  auto ex = make_in_process_executor();
  TestWorkers w{ex.get(), ex.get(), ex.get(), nullptr, {}};
  return run_test(req, w, DriverLimits{});
}

}  // namespace bb
