#include "test_runner.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "call_frame.hpp"
#include "call_guard.hpp"
#include "device.hpp"
#include "cpu_cache.hpp"
#include "cpu_timer.hpp"
#include "device_timer.hpp"
#include "paired_timer.hpp"
#include "compare.hpp"
#include "host_buffer.hpp"
#include "init.hpp"
#include "parallel.hpp"

namespace bb {

// ---------------------------------------------------------------------------------------------
// Protocol messages.

namespace {
const char* target_kind_name(Target::Kind k) {
  switch (k) {
    case Target::Kind::kernel_impl: return "kernel_impl";
    case Target::Kind::reference: return "reference";
    case Target::Kind::identity: return "identity";
  }
  return "identity";
}
Target::Kind target_kind(const std::string& s) {
  if (s == "kernel_impl") return Target::Kind::kernel_impl;
  if (s == "reference") return Target::Kind::reference;
  return Target::Kind::identity;
}
nlohmann::json target_json(const Target& t) { return {{"kind", target_kind_name(t.kind)}, {"library", t.library}}; }
Target target_from(const nlohmann::json& j) { return Target{target_kind(j.value("kind", "identity")), j.value("library", "")}; }
}  // namespace

nlohmann::json to_json(const TestRequest& r) {
  const auto& s = r.timing.rule;
  return {{"cmd", "test"},
          {"manifest", r.manifest},
          {"op", r.op},
          {"case_index", r.case_index},
          {"impl", target_json(r.impl)},
          {"reference", target_json(r.reference)},
          {"device", r.device},
          {"device_index", r.device_index},
          {"reference_device", r.reference_device},
          {"check", r.check},
          {"time", r.time},
          {"check_determinism", r.check_determinism},
          {"seed", r.seed ? nlohmann::json(*r.seed) : nlohmann::json()},
          {"random_cases", r.random_cases},
          {"baseline", r.baseline ? target_json(*r.baseline) : nlohmann::json()},
          {"timing",
           {{"min_samples", s.min_samples}, {"max_samples", s.max_samples}, {"min_time", s.min_time},
            {"max_noise", s.max_noise}, {"timeout", s.timeout}, {"warmup_time", r.timing.warmup_time},
            {"min_sample_time", r.timing.min_sample_time}, {"mode", timing_mode_name(r.timing.mode)},
            {"blocking_kernel", r.timing.blocking_kernel}, {"l2_discard", r.timing.l2_discard},
            {"throttle_threshold", r.timing.throttle_threshold},
            {"throttle_recovery_delay", r.timing.throttle_recovery_delay}}}};
}

TestRequest test_request_from_json(const nlohmann::json& j) {
  TestRequest r;
  r.manifest = j.value("manifest", "");
  r.op = j.value("op", "");
  r.case_index = j.value("case_index", 0);
  r.impl = target_from(j.value("impl", nlohmann::json::object()));
  r.reference = target_from(j.value("reference", nlohmann::json::object()));
  r.device = j.value("device", "cpu");
  r.device_index = j.value("device_index", 0);
  r.reference_device = j.value("reference_device", "cpu");
  r.check = j.value("check", true);
  r.time = j.value("time", false);
  r.check_determinism = j.value("check_determinism", false);
  if (auto it = j.find("seed"); it != j.end() && !it->is_null()) r.seed = it->get<uint64_t>();
  r.random_cases = j.value("random_cases", 0);
  if (auto it = j.find("baseline"); it != j.end() && it->is_object()) r.baseline = target_from(*it);
  const auto t = j.value("timing", nlohmann::json::object());
  auto& s = r.timing.rule;
  s.min_samples = t.value("min_samples", s.min_samples);
  s.max_samples = t.value("max_samples", s.max_samples);
  s.min_time = t.value("min_time", s.min_time);
  s.max_noise = t.value("max_noise", s.max_noise);
  s.timeout = t.value("timeout", s.timeout);
  r.timing.warmup_time = t.value("warmup_time", r.timing.warmup_time);
  r.timing.min_sample_time = t.value("min_sample_time", r.timing.min_sample_time);
  r.timing.mode = t.value("mode", std::string("cold")) == "hot" ? TimingMode::hot : TimingMode::cold;
  r.timing.blocking_kernel = t.value("blocking_kernel", r.timing.blocking_kernel);
  r.timing.l2_discard = t.value("l2_discard", r.timing.l2_discard);
  r.timing.throttle_threshold = t.value("throttle_threshold", r.timing.throttle_threshold);
  r.timing.throttle_recovery_delay = t.value("throttle_recovery_delay", r.timing.throttle_recovery_delay);
  return r;
}

nlohmann::json to_json(const ProbeRequest& r) { return {{"cmd", "probe"}, {"library", r.library}, {"op", r.op}}; }
ProbeRequest probe_request_from_json(const nlohmann::json& j) { return {j.value("library", ""), j.value("op", "")}; }

nlohmann::json to_json(const ProbeReply& r) {
  return {{"loaded", r.loaded},
          {"error", r.error},
          {"has_kernel_impl", r.has_kernel_impl},
          {"has_reference", r.has_reference},
          {"info",
           {{"present", r.info.present}, {"abi_version", r.info.abi_version}, {"version", r.info.version},
            {"devices", r.info.devices}, {"dtypes", r.info.dtypes}}}};
}

ProbeReply probe_reply_from_json(const nlohmann::json& j) {
  ProbeReply r;
  r.loaded = j.value("loaded", false);
  r.error = j.value("error", "");
  r.has_kernel_impl = j.value("has_kernel_impl", false);
  r.has_reference = j.value("has_reference", false);
  const auto info = j.value("info", nlohmann::json::object());
  r.info.present = info.value("present", false);
  r.info.abi_version = info.value("abi_version", uint32_t{BB_ABI_VERSION});
  r.info.version = info.value("version", "");
  r.info.devices = info.value("devices", std::vector<std::string>{});
  r.info.dtypes = info.value("dtypes", std::vector<std::string>{});
  return r;
}

// ---------------------------------------------------------------------------------------------
// Caches.

Expected<const TestRunner::OpData*> TestRunner::op_data(const std::string& manifest, const std::string& op,
                                                        std::optional<uint64_t> seed, int random_cases) {
  auto& slot = ops_[fmt::format("{}#{}#{}", manifest, seed ? std::to_string(*seed) : "", random_cases)];
  if (!slot) {
    auto m = load_manifest(manifest, op);
    if (!m) return m.error();
    if (seed) m->seed = *seed;
    auto cases = expand_cases(*m, random_cases);
    if (!cases) return cases.error();
    slot = std::make_unique<OpData>(OpData{std::move(*m), std::move(*cases)});
  }
  return slot.get();
}

Expected<const PluginLibrary*> TestRunner::library(const std::string& path, const std::string& op) {
  auto& slot = libraries_[path];
  if (!slot) {
    auto lib = load_plugin(path, op);
    if (!lib) return lib.error();
    slot = std::make_unique<PluginLibrary>(std::move(*lib));
  }
  return slot.get();
}

Expected<bb_kernel_fn> TestRunner::resolve(const Target& t, const std::string& op) {
  if (t.kind == Target::Kind::identity) return bb_kernel_fn{nullptr};
  auto lib = library(t.library, op);
  if (!lib) return lib.error();
  bb_kernel_fn fn = t.kind == Target::Kind::kernel_impl ? (*lib)->kernel_impl : (*lib)->reference;
  if (!fn)
    return make_error(fmt::format("{}: missing symbol {}_{}", t.library, op, t.kind == Target::Kind::kernel_impl ? "kernel_impl" : "reference"));
  return fn;
}

ProbeReply TestRunner::probe(const ProbeRequest& request) {
  ProbeReply reply;
  auto lib = library(request.library, request.op);
  if (!lib) {
    reply.error = lib.error().message;
    return reply;
  }
  reply.loaded = true;
  reply.has_kernel_impl = (*lib)->kernel_impl != nullptr;
  reply.has_reference = (*lib)->reference != nullptr;
  reply.info = (*lib)->info;
  return reply;
}

// ---------------------------------------------------------------------------------------------
// Where a call runs.

struct TestRunner::Exec {
  DeviceRuntime* rt = nullptr;  // null: the CPU
  int ordinal = 0;
  void* stream = nullptr;
  DLDevice dl{kDLCPU, 0};
};

Expected<TestRunner::Exec> TestRunner::exec_for(const std::string& device, int index) {
  Exec ex;
  if (device == "cpu") return ex;
  if (poisoned_) return make_error("an earlier sticky device error left this worker's device context unusable");
  auto rt = DeviceRuntime::get(device);
  if (!rt) return rt.error();
  if (index < 0 || static_cast<size_t>(index) >= (*rt)->devices().size())
    return make_error(fmt::format("{} device {} does not exist ({} found)", device, index, (*rt)->devices().size()));
  ex.rt = *rt;
  ex.ordinal = index;
  ex.dl = DLDevice{static_cast<DLDeviceType>(ex.rt->dlpack_device_type()), index};
  if (int e = ex.rt->api().set_device(index); e != 0) return make_error(fmt::format("set device {}: {}", index, ex.rt->describe(e)));
  const std::string key = fmt::format("{}:{}", device, index);
  if (!streams_.count(key)) {
    void* stream = nullptr;
    if (int e = ex.rt->api().stream_create(&stream); e != 0) return make_error(fmt::format("stream: {}", ex.rt->describe(e)));
    streams_[key] = stream;
  }
  ex.stream = streams_[key];
  return ex;
}

// ---------------------------------------------------------------------------------------------
// One test.

namespace {

// The tensors of one call, staged in host memory: copies of the inputs, and outputs (poisoned,
// or aliasing an input), each with guard bytes around it.
struct CallBuffers {
  std::vector<HostBuffer> inputs;
  std::vector<HostBuffer> outputs;  // empty buffer for an in-place output

  CallBuffers(const ConcreteCase& c, const std::vector<HostBuffer>& pristine) {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs.emplace_back(pristine[i].size());
      parallel_copy(inputs.back().data(), pristine[i].data(), pristine[i].size());
    }
    for (const auto& o : c.outputs) {
      if (o.inplace_input >= 0) {
        outputs.emplace_back();
      } else {
        outputs.emplace_back(o.nbytes());
        outputs.back().poison(o.dtype);
      }
    }
  }
  // An output's bytes in host memory (after BoundCall::download for a device call).
  const uint8_t* output(const ConcreteCase& c, size_t j) const {
    const int in = c.outputs[j].inplace_input;
    return in >= 0 ? inputs[static_cast<size_t>(in)].data() : outputs[j].data();
  }
};

// Outputs copied aside, one buffer per output (a plain copy: its guards are not the call's).
using Snapshot = std::vector<HostBuffer>;

// Wipes a reference's buffers when it goes out of scope: its results do not outlive their
// comparison in this process's memory (a later call of the implementation could look there).
struct ScrubOnExit {
  CallBuffers& b;
  ~ScrubOnExit() {
    for (auto* set : {&b.inputs, &b.outputs})
      for (auto& buf : *set)
        if (buf.raw_size()) std::fill_n(static_cast<volatile uint8_t*>(buf.raw()), buf.raw_size(), uint8_t{0});
  }
};

struct CallOutcome {
  std::string error;    // "" on success
  bool sticky = false;  // the device context is lost
  bool outside = false;  // run_witnessed: outputs changed while the given stream was held
  bool held_too_long = false;  // run_witnessed: the hold timed out (the call synchronised the device)
};

constexpr double kWitnessHoldMs = 200;  // how long a witnessed call may hold the stream
constexpr const char* kOutsideStream =
    "the call's work ran outside the stream it was given (on the legacy default stream or a stream of its own): it wrote the "
    "outputs while the given stream was held, so events on that stream would time it as free";

// A call's tensors placed where it runs, ready to be invoked any number of times. On the CPU
// the staging buffers are used directly; on a device each guarded region is mirrored whole
// (guards and poison included) and copied back by download(), so every check reads host memory.
class BoundCall {
 public:
  BoundCall(const std::string& op, const ConcreteCase& c, CallBuffers& b, const TestRunner::Exec& ex)
      : c_(c), b_(b), ex_(ex) {
    std::vector<void*> in_ptrs, out_ptrs;
    for (auto& buf : b.inputs) in_ptrs.push_back(place(buf));
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      const int in = c.outputs[j].inplace_input;
      out_ptrs.push_back(in >= 0 ? in_ptrs[static_cast<size_t>(in)] : place(b.outputs[j]));
    }
    if (error_.empty()) frame_ = std::make_unique<CallFrame>(op, c, in_ptrs, out_ptrs, ex.dl, ex.stream);
  }
  ~BoundCall() {
    if (ex_.rt && !lost_)
      for (auto& [host, dev] : mirrors_) ex_.rt->api().free(dev);
  }
  BoundCall(const BoundCall&) = delete;
  BoundCall& operator=(const BoundCall&) = delete;

  const std::string& setup_error() const { return error_; }
  const bb_call* call() const { return frame_->call(); }
  std::string plugin_message() const { return !escaped_.empty() ? escaped_ : frame_ ? frame_->error_message() : ""; }

  // Launches fn (identity when null) without waiting for a device. A C++ exception that
  // escapes a plugin (one that skipped BB_KERNEL_IMPL) is that call's error.
  int launch(bb_kernel_fn fn) {
    if (!fn) {
      identity();
      return BB_OK;
    }
    try {
      return fn(frame_->call());
    } catch (const std::exception& e) {
      escaped_ = fmt::format("a C++ exception escaped the plugin: {}", e.what());
    } catch (...) {
      escaped_ = "a C++ exception escaped the plugin (not a std::exception)";
    }
    return BB_ERR_GENERIC;
  }

  // Waits for the device and reports its errors; sticky ones mark the context lost.
  CallOutcome finish_device() {
    CallOutcome out;
    if (!ex_.rt) return out;
    int e = ex_.rt->api().stream_synchronize(ex_.stream);
    if (e == 0) e = ex_.rt->api().get_last_error();
    if (e != 0) {
      out.sticky = ex_.rt->sticky(e);
      lost_ = lost_ || out.sticky;
      out.error = (out.sticky ? "sticky device error: " : "device error: ") + ex_.rt->describe(e);
    }
    return out;
  }

  // One call: launch, wait, check the return code and the device's errors.
  CallOutcome run(bb_kernel_fn fn) {
    frame_->clear_error();
    escaped_.clear();
    const int rc = launch(fn);
    CallOutcome out = finish_device();
    if (out.error.empty() && rc != BB_OK) {
      const std::string msg = escaped_.empty() ? frame_->error_message() : escaped_;
      out.error = fmt::format("returned {}{}{}", rc, msg.empty() ? "" : ": ", msg.empty() ? "(no message)" : msg);
    }
    return out;
  }

  // run(), with the given stream held by a blocking kernel while the plugin launches: work
  // it put on that stream cannot start, so outputs that change before the stream is released
  // were written by work elsewhere (the legacy default stream, a stream of its own), which
  // events on the given stream would not time. Inconclusive (and not flagged) when the hold
  // timed out: a plugin that synchronises the device inside its call. On the CPU: run().
  CallOutcome run_witnessed(bb_kernel_fn fn) {
    const auto& api = ex_.rt ? ex_.rt->api() : bb_device_runtime{};
    if (!ex_.rt || !fn || !api.block_stream_ticket || !api.ticket_timed_out) return run(fn);
    frame_->clear_error();
    escaped_.clear();
    uint32_t ticket = 0;
    if (api.block_stream_ticket(ex_.stream, kWitnessHoldMs, &ticket) != 0) return run(fn);
    const int rc = launch(fn);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // time for work elsewhere to show
    bool changed = false;
    for (auto& [host, dev] : mirrors_) {
      const auto now = std::make_unique_for_overwrite<uint8_t[]>(host->raw_size());
      if (api.memcpy_d2h(now.get(), dev, host->raw_size()) != 0) break;
      changed = changed || std::memcmp(now.get(), host->raw(), host->raw_size()) != 0;
    }
    api.release_stream();
    CallOutcome out = finish_device();
    int timed_out = 0;
    api.ticket_timed_out(ticket, &timed_out);
    if (out.error.empty() && rc != BB_OK) {
      const std::string msg = escaped_.empty() ? frame_->error_message() : escaped_;
      out.error = fmt::format("returned {}{}{}", rc, msg.empty() ? "" : ": ", msg.empty() ? "(no message)" : msg);
    }
    if (out.error.empty() && changed && !timed_out) {
      out.outside = true;
      api.synchronize();  // let it finish before anything else touches the buffers
    }
    out.held_too_long = timed_out != 0;
    return out;
  }

  // The call's device memory, as the cold timer may evict it.
  const std::vector<bb_device_range>& device_ranges() const { return ranges_; }

  // Zeroes the device mirrors (a reference's results, before its memory goes back to the pool
  // the implementation's allocations come from).
  void wipe_device() {
    if (!ex_.rt || lost_) return;
    for (auto& [host, dev] : mirrors_) ex_.rt->api().memset(dev, 0, host->raw_size(), ex_.stream);
    ex_.rt->api().stream_synchronize(ex_.stream);
  }

  // Copies every staging buffer to its device mirror (after the host rewrote inputs or outputs).
  std::string upload() {
    if (!ex_.rt) return "";
    for (auto& [host, dev] : mirrors_)
      if (int e = ex_.rt->api().memcpy_h2d(dev, host->raw(), host->raw_size()); e != 0) return "copy to device: " + ex_.rt->describe(e);
    return "";
  }

  // Copies every mirrored region back into its staging buffer.
  std::string download() {
    if (!ex_.rt) return "";
    for (auto& [host, dev] : mirrors_)
      if (int e = ex_.rt->api().memcpy_d2h(host->raw(), dev, host->raw_size()); e != 0) return "copy back: " + ex_.rt->describe(e);
    return "";
  }

 private:
  void* place(HostBuffer& buf) {
    if (!ex_.rt) return buf.data();
    void* dev = nullptr;
    // Whole 256-byte units: the last 128-byte cache line is the buffer's own (the timer drops
    // the buffer's lines from L2 between cold samples: device_timer.hpp).
    const size_t bytes = (buf.raw_size() + 255) / 256 * 256;
    if (int e = ex_.rt->api().malloc(&dev, bytes); e != 0) {
      if (error_.empty()) error_ = fmt::format("allocating {} bytes: {}", buf.raw_size(), ex_.rt->describe(e));
      return nullptr;
    }
    mirrors_.emplace_back(&buf, dev);
    ranges_.push_back({dev, bytes});
    if (int e = ex_.rt->api().memcpy_h2d(dev, buf.raw(), buf.raw_size()); e != 0 && error_.empty())
      error_ = "copy to device: " + ex_.rt->describe(e);
    return static_cast<uint8_t*>(dev) + HostBuffer::kGuardBytes;
  }

  // Identity reference: every output is a copy of the first input, converted (host memory).
  void identity() {
    const auto& in = c_.inputs[0];
    for (size_t j = 0; j < c_.outputs.size(); ++j) {
      const auto& o = c_.outputs[j];
      if (o.inplace_input == 0) continue;
      const int64_t n = std::min(in.numel(), o.numel());
      for (int64_t i = 0; i < n; ++i)
        store_element(o.dtype, b_.outputs[j].data(), static_cast<size_t>(i), load_element(in.dtype, b_.inputs[0].data(), static_cast<size_t>(i)));
    }
  }

  const ConcreteCase& c_;
  CallBuffers& b_;
  const TestRunner::Exec& ex_;
  std::vector<std::pair<HostBuffer*, void*>> mirrors_;
  std::vector<bb_device_range> ranges_;  // the device allocations, whole
  std::unique_ptr<CallFrame> frame_;
  std::string error_;
  std::string escaped_;  // an exception that left the plugin
  bool lost_ = false;
};

std::string format_value(double v) { return fmt::format("{:.9g}", v); }


// The outputs a call returned, watched for a while after it returned (a thread it left running
// may still be writing them): "" when they stayed, else which output changed and how much.
std::string changed_after_return(const ConcreteCase& c, BoundCall& bound, CallBuffers& bufs) {
  std::vector<std::vector<uint8_t>> returned;
  for (size_t j = 0; j < c.outputs.size(); ++j)
    returned.emplace_back(bufs.output(c, j), bufs.output(c, j) + c.outputs[j].nbytes());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (auto e = bound.download(); !e.empty()) return "after the call returned: " + e;
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (std::memcmp(returned[j].data(), bufs.output(c, j), o.nbytes()) == 0) continue;
    const size_t es = dtype_size(o.dtype);
    int64_t changed = 0;
    for (int64_t k = 0; k < o.numel(); ++k) changed += std::memcmp(returned[j].data() + k * es, bufs.output(c, j) + k * es, es) != 0;
    return fmt::format("output '{}': {} of {} elements changed after the call returned: work left running after the call "
                       "(a thread it started is still alive)",
                       o.name, changed, o.numel());
  }
  return "";
}

std::string describe_overrun(const HostBuffer::Overrun& o) {
  std::string s;
  if (o.after) s += fmt::format("wrote up to {} byte(s) past the end", o.after);
  if (o.before) s += fmt::format("{}wrote up to {} byte(s) before the start", s.empty() ? "" : " and ", o.before);
  return s;
}

}  // namespace

TestResult TestRunner::run(const TestRequest& req) {
  const auto started = std::chrono::steady_clock::now();
  TestResult r;
  r.op = req.op;
  r.device = req.device;
  // The phases (results.hpp): each mark() charges the time since the last one to a phase.
  auto phase_start = started;
  auto mark = [&](const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    r.phases[phase] += std::chrono::duration<double>(now - phase_start).count();
    phase_start = now;
  };
  const char* current = "setup_s";
  auto finish = [&](Verdict v, std::string message) {
    mark(current);
    r.verdict = v;
    r.message = std::move(message);
    r.duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
  };

  auto data = op_data(req.manifest, req.op, req.seed, req.random_cases);
  if (!data) return finish(Verdict::error, data.error().message);
  const Manifest& m = (*data)->manifest;
  if (req.case_index < 0 || static_cast<size_t>(req.case_index) >= (*data)->cases.size())
    return finish(Verdict::error, fmt::format("case index {} out of range", req.case_index));
  const ConcreteCase& c = (*data)->cases[static_cast<size_t>(req.case_index)];
  r.case_id = c.id;
  r.kind = case_kind_name(c.kind);
  r.flops = c.flops;
  r.bytes = c.bytes;

  auto impl = resolve(req.impl, req.op);
  if (!impl) return finish(Verdict::error, impl.error().message);
  auto impl_exec = exec_for(req.device, req.device_index);
  if (!impl_exec) return finish(Verdict::skipped, impl_exec.error().message);

  // A sticky device error ends this worker: the verdict is CRASH, the host starts a new one.
  auto device_failure = [&](const CallOutcome& out, const char* who) {
    if (out.sticky) poisoned_ = true;
    return finish(out.sticky ? Verdict::crash : Verdict::error, fmt::format("{}{}", who, out.error));
  };

  mark("setup_s");
  current = "inputs_s";
  // Inputs, generated once per test from the case's seed; every call gets fresh copies.
  std::vector<HostBuffer> pristine;
  for (const auto& t : c.inputs) {
    pristine.emplace_back(t.nbytes());
    if (auto s = fill_tensor(t, pristine.back().data(), mix_seed(c.seed, t.name), m.dir()); !s)
      return finish(Verdict::error, fmt::format("input '{}': {}", t.name, s.error().message));
  }

  mark("inputs_s");
  current = "reference_s";
  // The reference's outputs for `inputs` (the case's, or fresh values of the same shapes), in
  // host memory; a failure is the test's result.
  auto reference_outputs = [&](const std::vector<HostBuffer>& inputs, std::unique_ptr<CallBuffers>& into) -> std::optional<TestResult> {
    auto ref = resolve(req.reference, req.op);
    if (!ref) return finish(Verdict::error, "reference: " + ref.error().message);
    auto ref_exec = exec_for(*ref ? req.reference_device : "cpu", req.device_index);
    if (!ref_exec) return finish(Verdict::skipped, "reference: " + ref_exec.error().message);
    into = std::make_unique<CallBuffers>(c, inputs);
    CallBuffers& expected = *into;
    {
      BoundCall bound(req.op, c, expected, *ref_exec);
      if (!bound.setup_error().empty()) return finish(Verdict::error, "reference: " + bound.setup_error());
      const ProcessState before = capture_process_state();
      const CallOutcome out = bound.run(*ref);
      const LeftBehind left = restore_process_state(before);
      if (!out.error.empty()) return out.sticky ? device_failure(out, "reference: ") : finish(Verdict::error, "reference " + out.error);
      if (auto e = bound.download(); !e.empty()) return finish(Verdict::error, "reference: " + e);
      bound.wipe_device();
      if (left.any()) {
        retired_ = true;
        return finish(Verdict::error, "reference: the call " + left.describe());
      }
    }
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      const auto& o = c.outputs[j];
      if (o.inplace_input >= 0) continue;
      int64_t unwritten = 0;
      for (int64_t i = 0; i < o.numel(); ++i) unwritten += is_poison(o.dtype, expected.output(c, j), static_cast<size_t>(i)) ? 1 : 0;
      if (unwritten > 0)
        return finish(Verdict::error, fmt::format("the reference left {} of {} elements of output '{}' unwritten", unwritten, o.numel(), o.name));
    }
    return std::nullopt;
  };
  // The reference's results never share the process with a call of the implementation: each
  // call is made, and its outputs copied aside, before the reference computes what they must
  // be; then the reference's results are compared and wiped (docs/RELIABILITY.md).
  auto snapshot = [&](const CallBuffers& b) {
    Snapshot out;
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      out.emplace_back(c.outputs[j].nbytes());
      parallel_copy(out.back().data(), b.output(c, j), c.outputs[j].nbytes());
    }
    return out;
  };
  if (req.check) {
    mark("reference_s");
    current = "check_s";
    CallBuffers actual(c, pristine);
    {
      BoundCall bound(req.op, c, actual, *impl_exec);
      if (!bound.setup_error().empty()) return finish(Verdict::error, bound.setup_error());
      const ProcessState before = capture_process_state();
      CallOutcome out = bound.run_witnessed(*impl);
      if (out.error.empty() && out.held_too_long) {
        // The hold timed out: the call synchronised the device, as a first call does while its
        // kernels load. Once more on fresh buffers, which is the call checked below.
        for (size_t i = 0; i < c.inputs.size(); ++i) parallel_copy(actual.inputs[i].data(), pristine[i].data(), c.inputs[i].nbytes());
        for (size_t j = 0; j < c.outputs.size(); ++j)
          if (c.outputs[j].inplace_input < 0) actual.outputs[j].poison(c.outputs[j].dtype);
        if (auto e = bound.upload(); !e.empty()) return finish(Verdict::error, e);
        out = bound.run_witnessed(*impl);
      }
      const LeftBehind left = restore_process_state(before);
      if (!out.error.empty()) return out.sticky ? device_failure(out, "") : finish(Verdict::error, out.error);
      if (out.outside) return finish(Verdict::error, kOutsideStream);
      if (auto e = bound.download(); !e.empty()) return finish(Verdict::error, e);
      if (left.any()) {
        retired_ = true;
        return finish(Verdict::error, "the call " + left.describe());
      }
      // Threads the call started are still running: what it returned must stay as it was.
      if (left.new_threads)
        if (auto changed = changed_after_return(c, bound, actual); !changed.empty()) {
          retired_ = true;  // the thread may write anywhere next
          return finish(Verdict::fail, changed);
        }
    }

    // Writes outside the tensors.
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (auto o = actual.inputs[i].overrun(); o.any())
        return finish(Verdict::out_of_bounds, fmt::format("input '{}': {} ({} bytes)", c.inputs[i].name, describe_overrun(o), c.inputs[i].nbytes()));
    for (size_t j = 0; j < c.outputs.size(); ++j)
      if (auto o = actual.outputs[j].overrun(); o.any())
        return finish(Verdict::out_of_bounds, fmt::format("output '{}': {} ({} bytes)", c.outputs[j].name, describe_overrun(o), c.outputs[j].nbytes()));

    // Inputs that are not in-place targets must come back unchanged.
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      bool aliased = false;
      for (const auto& o : c.outputs) aliased = aliased || o.inplace_input == static_cast<int>(i);
      if (aliased) continue;
      const auto& t = c.inputs[i];
      if (std::memcmp(actual.inputs[i].data(), pristine[i].data(), t.nbytes()) == 0) continue;
      const size_t es = dtype_size(t.dtype);
      size_t first = 0;
      int64_t changed = 0;
      for (int64_t k = t.numel(); k-- > 0;)
        if (std::memcmp(actual.inputs[i].data() + k * es, pristine[i].data() + k * es, es) != 0) ++changed, first = static_cast<size_t>(k);
      return finish(Verdict::input_mutated,
                    fmt::format("input '{}': {} of {} elements changed; first at {}: was {}, now {}", t.name, changed, t.numel(),
                                format_index(static_cast<int64_t>(first), t.shape), format_value(load_element(t.dtype, pristine[i].data(), first)),
                                format_value(load_element(t.dtype, actual.inputs[i].data(), first))));
    }

    // What the call returned, copied aside; then (after the determinism check's second call)
    // what the reference says it must be.
    const auto got = snapshot(actual);
    if (req.check_determinism) {
      CallBuffers again(c, pristine);
      BoundCall bound(req.op, c, again, *impl_exec);
      if (!bound.setup_error().empty()) return finish(Verdict::error, bound.setup_error());
      if (auto out = bound.run(*impl); !out.error.empty()) return out.sticky ? device_failure(out, "second call: ") : finish(Verdict::error, "second call " + out.error);
      if (auto e = bound.download(); !e.empty()) return finish(Verdict::error, e);
      for (size_t j = 0; j < c.outputs.size(); ++j) {
        const auto& o = c.outputs[j];
        if (std::memcmp(again.output(c, j), got[j].data(), o.nbytes()) == 0) continue;
        int64_t diff = 0;
        const size_t es = dtype_size(o.dtype);
        for (int64_t k = 0; k < o.numel(); ++k) diff += std::memcmp(again.output(c, j) + k * es, got[j].data() + k * es, es) != 0;
        return finish(Verdict::nondeterministic, fmt::format("output '{}': two calls on the same inputs differ in {} of {} elements", o.name, diff, o.numel()));
      }
    }
    mark("check_s");
    current = "reference_s";
    std::unique_ptr<CallBuffers> expected_buffers;
    if (auto failed = reference_outputs(pristine, expected_buffers)) return *failed;
    const CallBuffers& expected = *expected_buffers;
    const ScrubOnExit wipe{*expected_buffers};
    mark("reference_s");
    current = "check_s";

    // Values.
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      const auto& o = c.outputs[j];
      const Comparison cmp = compare(o.dtype, got[j].data(), expected.output(c, j), static_cast<size_t>(o.numel()), o.tolerance);
      if (cmp.passed()) continue;
      Mismatch mm{o.name, cmp.mismatches, cmp.count, cmp.unwritten, cmp.max_abs_error, cmp.max_rel_error,
                  format_index(cmp.first_mismatch, o.shape), cmp.actual_at_first, cmp.expected_at_first, o.tolerance.atol, o.tolerance.rtol};
      r.mismatch = mm;
      if (cmp.unwritten > 0)
        return finish(Verdict::unwritten, fmt::format("output '{}': {} of {} elements left unwritten (still poisoned); first at {}",
                                                      o.name, cmp.unwritten, cmp.count, mm.first_index));
      return finish(Verdict::fail, fmt::format("output '{}': {} of {} elements differ (atol {}, rtol {}); max abs error {}, max rel error {}; "
                                               "first at {}: got {}, expected {}",
                                               o.name, cmp.mismatches, cmp.count, o.tolerance.atol, o.tolerance.rtol,
                                               format_value(cmp.max_abs_error), format_value(cmp.max_rel_error), mm.first_index,
                                               format_value(cmp.actual_at_first), format_value(cmp.expected_at_first)));
    }
  }

  mark(current);
  current = "timing_s";
  // On the timed call's buffers: `inputs` written in, outputs poisoned, one call of fn; its
  // outputs copied into `got`. "" when the call went well.
  auto call_again = [&](BoundCall& bound, CallBuffers& bufs, bb_kernel_fn fn, const std::vector<HostBuffer>& inputs,
                        Snapshot& got, CallOutcome& outcome) -> std::string {
    for (size_t i = 0; i < c.inputs.size(); ++i) parallel_copy(bufs.inputs[i].data(), inputs[i].data(), c.inputs[i].nbytes());
    for (size_t j = 0; j < c.outputs.size(); ++j)
      if (c.outputs[j].inplace_input < 0) bufs.outputs[j].poison(c.outputs[j].dtype);
    if (auto e = bound.upload(); !e.empty()) return e;
    outcome = bound.run_witnessed(fn);
    if (!outcome.error.empty()) return outcome.error;
    if (outcome.outside) return kOutsideStream;
    if (auto e = bound.download(); !e.empty()) return e;
    got = snapshot(bufs);
    return "";
  };
  // Outputs copied aside against the reference's: "" when they agree.
  auto differs = [&](const Snapshot& got, const CallBuffers& want) -> std::string {
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      const auto& o = c.outputs[j];
      const Comparison cmp = compare(o.dtype, got[j].data(), want.output(c, j), static_cast<size_t>(o.numel()), o.tolerance);
      if (cmp.passed()) continue;
      if (cmp.unwritten == cmp.count)
        return fmt::format("output '{}' was left unwritten (still poisoned): the call skipped the work", o.name);
      return fmt::format("output '{}': {} of {} elements differ; first at {}: got {}, expected {}", o.name, cmp.mismatches, cmp.count,
                         format_index(cmp.first_mismatch, o.shape), format_value(cmp.actual_at_first), format_value(cmp.expected_at_first));
    }
    return "";
  };
  auto recheck_timed_buffers = [&](BoundCall& bound, CallBuffers& bufs, bb_kernel_fn fn) -> std::optional<TestResult> {
    CallOutcome outcome;
    auto call_failed = [&](const std::string& why, const char* which) -> TestResult {
      if (outcome.sticky) return device_failure(outcome, "after the timed calls: ");
      if (outcome.outside) return finish(Verdict::error, std::string("after the timed calls: ") + kOutsideStream);
      return finish(Verdict::error, fmt::format("after the timed calls, a call on {}: {}", which, why));
    };
    // The case's inputs again.
    Snapshot same;
    if (auto why = call_again(bound, bufs, fn, pristine, same, outcome); !why.empty()) return call_failed(why, "the case's inputs");
    {
      std::unique_ptr<CallBuffers> want;
      if (auto failed = reference_outputs(pristine, want)) return failed;
      const ScrubOnExit wipe{*want};
      if (auto why = differs(same, *want); !why.empty())
        return finish(Verdict::fail, "after the timed calls, a call on the case's inputs in the same buffers: " + why);
    }
    // Fresh values: the same shapes and initialisers, another seed.
    std::vector<HostBuffer> fresh;
    for (const auto& t : c.inputs) {
      fresh.emplace_back(t.nbytes());
      if (auto s = fill_tensor(t, fresh.back().data(), mix_seed(c.seed, "fresh:" + t.name), m.dir()); !s)
        return finish(Verdict::error, fmt::format("fresh input '{}': {}", t.name, s.error().message));
    }
    Snapshot renewed;
    if (auto why = call_again(bound, bufs, fn, fresh, renewed, outcome); !why.empty()) return call_failed(why, "fresh input values");
    std::unique_ptr<CallBuffers> want;
    if (auto failed = reference_outputs(fresh, want)) return failed;
    const ScrubOnExit wipe{*want};
    if (auto why = differs(renewed, *want); !why.empty()) {
      // The previous inputs' result for the new ones: a cache keyed by the buffers.
      bool stale = true;
      for (size_t j = 0; j < c.outputs.size() && stale; ++j)
        stale = c.outputs[j].inplace_input < 0 && std::memcmp(renewed[j].data(), same[j].data(), renewed[j].size()) == 0;
      return finish(Verdict::fail, fmt::format("after the timed calls, a call on fresh input values in the same buffers: {}{}", why,
                                               stale ? " (it returned the previous inputs' result: results cached by pointer?)" : ""));
    }
    return std::nullopt;
  };
  if (req.time) {
    const ProcessState before_timing = capture_process_state();
    CallBuffers timed(c, pristine);
    BoundCall bound(req.op, c, timed, *impl_exec);
    if (!bound.setup_error().empty()) return finish(Verdict::error, bound.setup_error());
    const bb_kernel_fn fn = *impl;
    // One measurement of `call` on the implementation's device (or the CPU, flushing `bufs`).
    auto measure = [&](BoundCall& b, bb_kernel_fn f, CallBuffers& bufs, const TimingOptions& options) -> Expected<Measurement> {
      if (impl_exec->rt) {
        const auto& props = impl_exec->rt->devices()[static_cast<size_t>(impl_exec->ordinal)];
        const ColdTarget target{b.device_ranges(), props.l2_bytes};
        return measure_device([&] { return b.launch(f); }, impl_exec->rt->api(), impl_exec->stream, props.sm_clock_khz / 1e3, options,
                              target);
      }
      // Cold: every byte the call touches, guards included, leaves the caches before a sample.
      auto flush = [&] {
        for (auto* set : {&bufs.inputs, &bufs.outputs})
          for (auto& buf : *set) evict_from_cpu_caches(buf.raw(), buf.raw_size());
      };
      return measure_cpu([&] { return b.launch(f); }, flush, options);
    };
    auto timing_failure = [&](BoundCall& b, const Failure& e, const char* who) {
      CallOutcome out = b.finish_device();
      if (out.sticky) return device_failure(out, who);
      const std::string msg = b.plugin_message();
      return finish(Verdict::error, fmt::format("{}{}{}{}", who, e.message, msg.empty() ? "" : ": ", msg));
    };

    // The baseline, when paired: timed on this call's buffers, on the same device.
    std::optional<bb_kernel_fn> base_fn;
    std::string pairing_note;
    if (req.baseline) {
      if (auto b = resolve(*req.baseline, req.op); !b) pairing_note = "baseline: " + b.error().message;
      else if (!*b) pairing_note = "baseline: an identity baseline cannot be timed";
      else base_fn = *b;
    }
    Measurement meas;
    double baseline_measured = 0;
    if (!base_fn) {
      auto m = measure(bound, fn, timed, req.timing);
      if (!m) return timing_failure(bound, m.error(), "while timing: ");
      meas = std::move(*m);
    } else {
      // The same buffers for both: where the tensors lie (alignment, pages, cache sets) is
      // part of a call's time, and must not differ between the two sides of a pair.
      auto paired = measure_paired([&](bool baseline, const TimingOptions& o) { return measure(bound, baseline ? *base_fn : fn, timed, o); },
                                   req.timing);
      const bool baseline_failed = !paired && paired.error().message.rfind("baseline: ", 0) == 0;
      if (!paired && !baseline_failed) return timing_failure(bound, paired.error(), "while timing: ");
      if (baseline_failed) {
        // The baseline's fault, not the implementation's: unless it broke the device, the
        // implementation is timed alone and the result says why it has no speedup.
        if (CallOutcome out = bound.finish_device(); out.sticky) return device_failure(out, "while timing the baseline: ");
        pairing_note = paired.error().message;
        auto m = measure(bound, fn, timed, req.timing);
        if (!m) return timing_failure(bound, m.error(), "while timing: ");
        meas = std::move(*m);
      } else {
        meas = std::move(paired->impl);
        baseline_measured = paired->baseline.measured_time;
        r.baseline_median = paired->baseline.stats.median;
        if (paired->speedup) {
          r.speedup = paired->speedup->speedup;
          r.speedup_low = paired->speedup->low;
          r.speedup_high = paired->speedup->high;
          r.speedup_confidence = paired->speedup->confidence;
          r.speedup_pairs = static_cast<double>(paired->speedup->pairs);
        }
      }
    }
    if (const LeftBehind left = restore_process_state(before_timing); left.any()) {
      retired_ = true;
      return finish(Verdict::error, "while timing: the calls " + left.describe());
    }
    // The timed calls are checked as well: on the buffers they used, a call on the case's inputs
    // and one on fresh values, outputs poisoned before each, must both give the reference's
    // results. A plugin that skips work after its first call, or caches results by pointer,
    // fails here (docs/RELIABILITY.md).
    if (req.check) {
      if (auto failed = recheck_timed_buffers(bound, timed, fn)) return *failed;
    }
    Timing t;
    t.mode = timing_mode_name(meas.mode);
    t.stats = meas.stats;
    t.host = meas.host;
    t.stop = r.speedup_pairs ? "paired" : stop_reason_name(meas.stop);
    t.batch = meas.batch;
    t.warmup_calls = meas.warmup_calls;
    t.wall_time = meas.wall_time;
    t.measured_time = meas.measured_time;
    t.baseline_measured_time = baseline_measured;
    t.throttled = meas.throttled;
    t.clock_mhz = meas.clock_mhz;
    t.blocking = meas.blocking;
    t.eviction = meas.eviction;
    t.samples_per_sync = meas.samples_per_sync;
    t.event_cost = meas.event_cost;
    t.notes = meas.notes;
    if (!pairing_note.empty()) t.notes.push_back(pairing_note + ": no speedup");
    r.timing = t;
    const double med = meas.stats.median;
    if (med > 0 && c.flops) r.tflops = *c.flops / med / 1e12;
    if (med > 0 && c.bytes) r.gbps = *c.bytes / med / 1e9;
  }
  return finish(Verdict::pass, "");
}

}  // namespace bb
