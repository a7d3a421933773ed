#include "worker/request_server.hpp"
#include "worker/finite_differences.hpp"
#include "worker/pass_pair.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "devices/device.hpp"
#include "devices/device_runtimes.hpp"
#include "measure/cpu_cache.hpp"
#include "measure/cpu_timer.hpp"
#include "measure/device_timer.hpp"
#include "parallel.hpp"
#include "run/workers/executor.hpp"
#include "worker/call_guard.hpp"
#include "worker/code_seal.hpp"
#include "worker/crash_frames.hpp"
#include "worker/device_probe.hpp"
#include "worker/fresh_stage.hpp"

namespace bb {

// ---------------------------------------------------------------------------------------------
// Probes.

ProbeReply RequestServer::probe_library(const ProbeRequest& request) {
  ProbeReply reply;
  auto lib = library(request.library, request.op);
  if (!lib) {
    reply.error = lib.error().message;
    reply.unavailable = is_python_implementation(request.library) && reply.error.find(kPythonUnavailable) != std::string::npos;
    return reply;
  }
  reply.loaded = true;
  reply.has_kernel_impl = (*lib)->kernel_impl != nullptr;
  reply.has_reference = (*lib)->reference != nullptr;
  reply.has_backward_impl = (*lib)->backward_impl != nullptr;
  reply.has_backward_reference = (*lib)->backward_reference != nullptr;
  reply.info = (*lib)->info;
  return reply;
}

// ---------------------------------------------------------------------------------------------
// Caches.

Expected<const PluginLibrary*> RequestServer::library(const std::string& path, const std::string& op) {
  auto& slot = libraries_[path];
  if (!slot) {
    auto lib = load_plugin(path, op);
    if (!lib) return lib.error();
    slot = std::make_unique<PluginLibrary>(std::move(*lib));
    note_loaded_modules();  // a crash's frames name it (crash_frames.hpp), and what it loaded
  }
  return slot.get();
}

Expected<bb_kernel_fn> RequestServer::resolve(const Target& t, const std::string& op) {
  if (t.kind == Target::Kind::identity) return bb_kernel_fn{nullptr};
  auto lib = library(t.library, op);
  if (!lib) return lib.error();
  const bool impl = t.kind == Target::Kind::kernel_impl, backward = t.pass == Target::Pass::backward;
  const bool differences = t.pass == Target::Pass::differences || t.pass == Target::Pass::pair_differences;
  const bool pair = t.pass == Target::Pass::pair || t.pass == Target::Pass::pair_differences;
  if (differences || pair) {
    bb_kernel_fn forward = impl ? (*lib)->kernel_impl : (*lib)->reference;
    if (!forward) return make_error(fmt::format("{}: missing symbol {}_{}", t.library, op, impl ? "kernel_impl" : "reference"));
    // The forward's gradients by finite differences (a reference with no backward).
    if (differences) set_differences_forward(op, forward);
    bb_kernel_fn back = differences ? &backward_by_differences : impl ? (*lib)->backward_impl : (*lib)->backward_reference;
    if (!back) return make_error(fmt::format("{}: missing symbol {}_{}", t.library, op, impl ? "backward_impl" : "backward_reference"));
    if (!pair) return back;
    if ((*lib)->python) return make_error("a Python file's fwd_bwd is not supported yet (its forward's returned tensors reach the host after the call)");
    return bind_pass_pair(forward, back);  // fwd_bwd: the forward, then the backward (pass_pair.hpp)
  }
  bb_kernel_fn fn = backward ? (impl ? (*lib)->backward_impl : (*lib)->backward_reference) : (impl ? (*lib)->kernel_impl : (*lib)->reference);
  if (!fn)
    return make_error(fmt::format("{}: missing symbol {}_{}", t.library, op,
                                  backward ? (impl ? "backward_impl" : "backward_reference") : (impl ? "kernel_impl" : "reference")));
  return fn;
}

Expected<ExecPlace> RequestServer::place_for(const std::string& device, int index) {
  ExecPlace ex;
  if (is_cpu(device)) return ex;
  if (poisoned_) return make_error("an earlier sticky device error left this worker's device context unusable");
  auto rt = DeviceRuntime::get(device);
  if (!rt) return rt.error();
  if (one_device_ && device == one_device_->runtime) {  // the host's ordinal, mapped to the one device it sees
    if (index != one_device_->ordinal)
      return make_error(fmt::format("this worker sees {} device {} alone ({}); device {} was asked", device, one_device_->ordinal, one_device_->uuid, index));
    const auto& seen = (*rt)->devices();
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const bb_device_properties& p) { return one_device_->uuid == p.uuid; });
    if (it == seen.end()) return make_error(fmt::format("{} device {} ({}) is not visible to this worker", device, index, one_device_->uuid));
    index = static_cast<int>(it - seen.begin());
  }
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
// Sessions.

namespace {

// Just-in-time compilations (a Python implementation's Triton kernels) in this process so far.
struct JitCount {
  int64_t compiles = 0;
  double seconds = 0;
  JitCount operator-(const JitCount& o) const { return {compiles - o.compiles, seconds - o.seconds}; }
};

// A reply's account of the compilations its call or block saw: reported apart (a test's
// compile_s phase), and a timed block that compiled says so.
JitCount jit_count(const bb_python_bridge* python) {
  JitCount n;
  if (python) n.seconds = python->compile_seconds(&n.compiles);
  return n;
}

nlohmann::json with_jit(nlohmann::json body, const JitCount& jit) {
  if (jit.compiles > 0) {
    body["compiles"] = jit.compiles;
    body["compile_s"] = jit.seconds;
  }
  return body;
}

}  // namespace

struct RequestServer::PreparedCall {
  ConcreteCase c;  // the host's (PrepareRequest::test_case)
  std::string op;
  bb_kernel_fn fn = nullptr;
  const bb_python_bridge* python = nullptr;  // a .py implementation's (null: a library's)
  bool reference = false;  // a reference's buffers are wiped after each call
  SealedBlob pristine;     // the case's inputs, as the host made them
  std::unique_ptr<CallBuffers> buffers;
  std::unique_ptr<BoundCall> bound;
  std::vector<uint8_t> spacer;  // replace_buffers(): held until the next placement
  std::unique_ptr<FreshStage> fresh;  // the host's fresh inputs for every timed sample ("pace")
  std::vector<const uint8_t*> inputs_of(const SealedBlob& blob) const {
    const BlobLayout l = inputs_layout(c);
    std::vector<const uint8_t*> p;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) p.push_back(blob.data() + l.offsets[i]);
    return p;
  }
  ~PreparedCall() {
    bound.reset();
    if (buffers && reference) buffers->scrub();
  }

  // CPU blocks: the call's buffers in fresh memory before every block. Where a process's
  // buffers lie in physical memory (which cache sets, which DRAM banks and rows they share) is
  // fixed for its life, and two workers timing the same code read up to 2-5% apart, steadily, on
  // the 2-core VM under load (docs/PERFORMANCE.md, "Self-speedup across processes"). New
  // buffers each block, taken after a spacer of a random number of pages, make that a block's
  // draw: a pairing's blocks average it, and the interval covers it. Not above kReplaceMaxBytes
  // (a block would pay more in page faults than it measures), not on a device (its mirrors are
  // the runtime's).
  static constexpr std::size_t kReplaceMaxBytes = std::size_t{64} << 20;
  // `placed`: it did (the inputs are the case's, the outputs poisoned: no reset is needed).
  // With fresh inputs (a stage the host writes: fresh_inputs_protocol.hpp), the buffers are laid
  // over the block's stage instead (a new memfd each block: its pages are the block's draw), the
  // case's inputs in them for the warm-up.
  std::string replace_buffers(std::mt19937_64& draw, bool& placed) {
    placed = false;
    if (bound->on_device()) return "";
    if (fresh) {
      if (std::string e = fresh->next_stage(); !e.empty()) return "fresh inputs: " + e;
      auto staged = std::make_unique<CallBuffers>(c, inputs_of(pristine), fresh->buffers());
      auto rebound = std::make_unique<BoundCall>(op, c, *staged, bound->place());
      rebound->set_python(python);
      if (!rebound->setup_error().empty()) return rebound->setup_error();
      bound = std::move(rebound);
      buffers = std::move(staged);
      fresh->release_previous();  // nothing lies over the last block's stage now
      placed = true;
      return "";
    }
    std::size_t bytes = 0;
    for (const auto& t : c.inputs) bytes += t.nbytes();
    for (const auto& t : c.outputs) bytes += t.nbytes();
    if (bytes > kReplaceMaxBytes) return "";
    std::vector<uint8_t> next_spacer((1 + draw() % 64) * HostBuffer::kPage, uint8_t{1});  // touched: its pages are taken
    auto fresh = std::make_unique<CallBuffers>(c, inputs_of(pristine));
    auto rebound = std::make_unique<BoundCall>(op, c, *fresh, bound->place());
    rebound->set_python(python);
    if (!rebound->setup_error().empty()) return rebound->setup_error();
    bound = std::move(rebound);  // before the buffers it was bound to go
    buffers = std::move(fresh);
    spacer = std::move(next_spacer);
    placed = true;
    return "";
  }
};

// A worker of one GPU's slot (WorkerWalls::device_uuid): read from its environment when it
// starts, before any plugin code runs in it.
RequestServer::RequestServer() {
  const char* runtime = std::getenv(kDeviceRuntimeEnv);
  const char* uuid = std::getenv(kDeviceUuidEnv);
  const char* ordinal = std::getenv(kDeviceOrdinalEnv);
  if (runtime && *runtime && uuid && *uuid && ordinal && *ordinal) one_device_ = OneDevice{runtime, uuid, std::atoi(ordinal)};
}
RequestServer::~RequestServer() = default;

namespace {
// Where a request's time goes in the worker: named steps, in seconds, sent with the reply (its
// own word: for BACKENDBENCH_TRACE_BLOCKS only, never judged).
class Steps {
 public:
  void operator()(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    json_[name] = json_.value(name, 0.0) + std::chrono::duration<double>(now - t0_).count();
    t0_ = now;
  }
  const nlohmann::json& json() const { return json_; }

 private:
  nlohmann::json json_ = nlohmann::json::object();
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

constexpr const char* kOnDeviceOnly = "the case's inputs were made on the device and live there only: restoring them failed";

Message reply_error(std::string error, bool sticky = false) { return error_message(std::move(error), sticky); }
}  // namespace

// ---------------------------------------------------------------------------------------------
// Before anything is prepared.

Message RequestServer::probe(const ProbeRequest& req, UniqueFd) { return Message{to_json(probe_library(req)), {}}; }

// Python files: one interpreter, PyTorch imported once, a child importing each (probe_many);
// or their text read, nothing run (read_many: null where a file must be imported to say).
Message RequestServer::survey(const std::vector<std::string>& files, std::vector<std::string> ops, bool read_only) {
  auto probe_of = [](const PythonSurvey& f) {
    ProbeReply r;
    r.loaded = f.loaded;
    r.error = f.error;
    r.has_kernel_impl = f.has_kernel_impl;
    r.has_reference = f.has_reference;
    // A .py file's forward has a backward: its own <op>_backward, or autograd's (python_bridge.h).
    r.has_backward_impl = f.has_kernel_impl;
    r.has_backward_reference = f.has_reference;
    r.info = f.info;
    r.imports_packages = f.imports_packages;
    return r;
  };
  if (ops.empty()) ops = {""};
  SurveyReply reply;
  if (read_only) {
    if (auto found = read_python(files, ops))
      for (const auto& f : *found) reply.probes.push_back(f ? std::optional<ProbeReply>(probe_of(*f)) : std::nullopt);
  } else if (auto found = survey_python(files, ops)) {
    for (const auto& f : *found) reply.probes.push_back(probe_of(f));
  }
  return Message{to_json(reply), {}};
}
Message RequestServer::probe_many(const ProbeManyRequest& req, UniqueFd) { return survey(req.libraries, req.ops, false); }
Message RequestServer::read_many(const ReadManyRequest& req, UniqueFd) { return survey(req.libraries, req.ops, true); }

// A BackendBench-py folder's tests (generated_manifest.hpp).
Message RequestServer::generate(const GenerateRequest& req, UniqueFd) {
  std::vector<std::filesystem::path> candidates(req.candidates.begin(), req.candidates.end());
  CallReply r;
  r.error = generate_with_python(req.gen_input, candidates, req.op, req.seed, req.out);
  return Message{r.to_json(), {}};
}

Message RequestServer::devices(const DevicesRequest& req, UniqueFd) {
  return Message{describe_device_kind(req.kind, req.measure_peak, req.known_peaks), {}};
}

// A spare worker's context, made before its first test (spare_worker.hpp).
Message RequestServer::warm(const WarmRequest& req, UniqueFd) {
  if (!is_cpu(req.device))
    if (auto place = place_for(req.device, req.device_index); !place) return reply_error(place.error().message);
  // A .py implementation's interpreter, PyTorch and Triton imported now, beside the other
  // workers' starts (an error is its first prepare's to say). The worker's own code is
  // captured first, as a prepare would before loading the bridge: what the interpreter loads
  // is the plugin's side, never watched (hashing PyTorch's libraries after every test, and
  // their GOT slots after every block, cost more than the calls: the clock audit took an
  // honest implementation for IMPLAUSIBLE).
  if (!req.python) return Message{CallReply{}.to_json(), {}};
  capture_integrity(req.device);
  Steps step;
  start_python_bridge();
  step("python_s");
  nlohmann::json reply = CallReply{}.to_json();
  reply["steps"] = step.json();
  return Message{reply, {}};
}

// ---------------------------------------------------------------------------------------------
// A prepared call's.

Expected<RequestServer::PreparedCall*> RequestServer::prepared(const std::string& role) {
  auto it = prepared_.find(role);
  if (it == prepared_.end()) return make_error(fmt::format("nothing prepared as '{}' (prepare it first)", role));
  return it->second.get();
}

Message RequestServer::end(const EndRequest& req, UniqueFd) {
  if (auto it = prepared_.find(req.role); it != prepared_.end()) {
    if (it->second->reference && it->second->bound) it->second->bound->wipe_device();  // results kept there by a made call
    prepared_.erase(it);
  }
  return Message{nlohmann::json::object(), {}};
}

Message RequestServer::call(const CallRequest& req, UniqueFd variant) {
  auto s = prepared(req.role);
  if (!s) return reply_error(s.error().message);
  return call_on(**s, req, std::move(variant));
}

Message RequestServer::block(const BlockRequest& req, UniqueFd) {
  auto s = prepared(req.role);
  if (!s) return reply_error(s.error().message);
  return block_on(**s, req.timing, req.return_buffers);
}

// Fresh inputs for every timed sample from now on (fresh_inputs_protocol.hpp).
Message RequestServer::pace(const PaceRequest& req, UniqueFd socket) {
  auto s = prepared(req.role);
  if (!s) return reply_error(s.error().message);
  auto stage = std::make_unique<FreshStage>();
  if (std::string e = stage->attach(std::move(socket), (*s)->c); !e.empty()) return reply_error("fresh inputs: " + e);
  (*s)->fresh = std::move(stage);
  return Message{CallReply{}.to_json(), {}};
}

void RequestServer::capture_integrity(const std::string& device) {
  if (!watch_integrity_ || integrity_.captured()) return;
  // Before any plugin code is in the process: what the worker loaded itself sealed (not what a
  // warm interpreter loaded: the plugin's side), then the device's runtime and driver loaded,
  // so that they are watched too, and our runtime plugin sealed (code_seal.hpp).
  const auto& interpreter = interpreter_objects();
  seal_loaded_code([&](const std::string& name) { return !interpreter.count(name) && !is_dynamic_loader(name); });
  if (!is_cpu(device)) {
    (void)DeviceRuntime::get(device);
    seal_loaded_code([](const std::string& name) {
      const auto base = name.substr(name.find_last_of('/') + 1);
      return base.rfind("backendbench_cuda", 0) == 0 || base.rfind("backendbench_hip", 0) == 0;
    });
  }
  integrity_ = WorkerIntegrity::capture(interpreter);
}

Message RequestServer::prepare(const PrepareRequest& req, UniqueFd inputs) {
  note_loaded_modules();  // what the runtimes and the plugins loaded since (crash_frames.hpp)
  Steps step;
  prepared_.erase(req.role);
  auto s = std::make_unique<PreparedCall>();
  s->c = req.test_case;
  s->op = req.op;
  s->reference = req.target.kind != Target::Kind::kernel_impl;
  capture_integrity(req.device);
  auto fn = resolve(req.target, req.op);
  if (!fn) return reply_error(fn.error().message);
  s->fn = *fn;
  auto place = place_for(s->fn ? req.device : std::string(kCpuDevice), req.device_index);
  if (!place) {
    CallReply r;
    r.error = place.error().message;
    r.skipped = true;
    return Message{r.to_json(), {}};
  }
  // The case's inputs: from the host's blob, or made on the device (then kept there only).
  if (!req.generate || !s->fn) {
    auto blob = SealedBlob::adopt(std::move(inputs), inputs_layout(s->c).total);
    if (!blob) return reply_error("the case's inputs: " + blob.error().message);
    s->pristine = std::move(*blob);
  }
  step("load_s");
  s->buffers = std::make_unique<CallBuffers>(s->c, s->pristine.empty() ? std::vector<const uint8_t*>{} : s->inputs_of(s->pristine));
  step("buffers_s");
  s->bound = std::make_unique<BoundCall>(req.op, s->c, *s->buffers, *place, req.shareable);
  if (s->fn) s->bound->set_python(s->python = (*library(req.target.library, req.op))->python);
  step("bind_s");
  if (!s->bound->setup_error().empty()) return reply_error(s->bound->setup_error());
  if (s->pristine.empty()) {
    if (auto e = s->bound->make_inputs(*req.generate); !e.empty()) return reply_error(e);
    step("generate_s");
  }
  s->bound->keep_pristine();  // on a device: calls and blocks start from it without the host
  if (s->pristine.empty() && !s->bound->keeps_pristine()) return reply_error("the inputs made on the device could not be kept there");
  step("pristine_s");
  prepared_[req.role] = std::move(s);
  nlohmann::json body = CallReply{}.to_json();
  body["steps"] = step.json();
  return Message{body, {}};
}

Expected<SealedBlob> RequestServer::buffers_blob(PreparedCall& s) {
  const ConcreteCase& c = s.c;
  const BlobLayout l = buffers_layout(c);
  return SealedBlob::create(l.total, [&](uint8_t* p) {
    std::size_t k = 0;
    for (auto& b : s.buffers->inputs) {
      parallel_copy(p + l.offsets[k], b.raw(), b.raw_size());
      ++k;
    }
    for (auto& b : s.buffers->outputs) {
      if (b.raw_size()) parallel_copy(p + l.offsets[k], b.raw(), b.raw_size());
      ++k;
    }
  });
}

namespace {
// Threads a call started are still running: what it returned must stay as it was. "" where it
// did, else which output changed and how much, 50 ms later.
Expected<std::string> changed_after_return(const ConcreteCase& c, CallBuffers& buffers, BoundCall& bound) {
  std::vector<std::vector<uint8_t>> returned;
  for (size_t j = 0; j < c.outputs.size(); ++j) returned.emplace_back(buffers.output(c, j), buffers.output(c, j) + c.outputs[j].nbytes());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (auto e = bound.download(); !e.empty()) return make_error("after the call returned: " + e);
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (std::memcmp(returned[j].data(), buffers.output(c, j), o.nbytes()) == 0) continue;
    const size_t es = dtype_size(o.dtype);
    int64_t changed = 0;
    for (int64_t k = 0; k < o.numel(); ++k) changed += std::memcmp(returned[j].data() + k * es, buffers.output(c, j) + k * es, es) != 0;
    return fmt::format("output '{}': {} of {} elements changed after the call returned: work left running after the call (a thread it "
                       "started is still alive)",
                       o.name, changed, o.numel());
  }
  return std::string();
}
}  // namespace

// One call on the prepared call's buffers: inputs rewritten (the case's, those that came with the
// request, made on the device, or left there by the checker: CallRequest), outputs poisoned, the
// call witnessed on a device; then its buffers go back, unless `return_buffers` is false (the
// checker compares them on the device: device_check.hpp).
Message RequestServer::call_on(PreparedCall& s, const CallRequest& req, UniqueFd variant) {
  const bool witnessed = req.witnessed, return_buffers = req.return_buffers;
  const ConcreteCase& c = s.c;
  SealedBlob other;
  if (variant) {
    auto blob = SealedBlob::adopt(std::move(variant), inputs_layout(c).total);
    if (!blob) return reply_error("the call's inputs: " + blob.error().message);
    other = std::move(*blob);
  }
  Steps step;
  const SealedBlob& source = other.empty() ? s.pristine : other;
  const auto inputs = source.empty() ? std::vector<const uint8_t*>{} : s.inputs_of(source);
  BoundCall& bound = *s.bound;
  auto restore = [&]() -> std::string {
    if (req.generate) {
      std::string e = bound.generate_inputs(*req.generate);
      step("generate_s");
      return e;
    }
    if (req.staged) {
      std::string e = bound.poison_own_outputs();
      step("poison_s");
      return e;
    }
    if (other.empty() && bound.restore_pristine()) {  // the case's inputs, kept on the device
      step("restore_s");
      return "";
    }
    if (other.empty() && s.pristine.empty()) return std::string(kOnDeviceOnly);
    s.buffers->reset(c, inputs);
    step("reset_s");
    std::string e = bound.upload();
    step("upload_s");
    return e;
  };
  if (auto e = restore(); !e.empty()) return reply_error(e);
  const ProcessState before = capture_process_state();
  step("state_s");
  const JitCount jit_before = jit_count(s.python);
  CallOutcome out = witnessed ? bound.run_witnessed(s.fn) : bound.run(s.fn);
  step("run_s");
  if (out.error.empty() && out.held_too_long) {
    // The hold timed out: the call synchronised the device, as a first call does while its
    // kernels load. Once more on fresh buffers, which is the call returned.
    if (auto e = restore(); !e.empty()) return reply_error(e);
    out = bound.run_witnessed(s.fn, /*watch=*/false);
    step("rerun_s");
  }
  const LeftBehind left = restore_process_state(before);
  step("state_s");
  const JitCount jit = jit_count(s.python) - jit_before;
  CallReply r;
  r.error = out.error;
  r.sticky = out.sticky;
  r.outside = out.outside;
  r.unsupported = out.unsupported;
  if (out.sticky) poisoned_ = true;
  if (left.any()) {
    retired_ = true;
    r.left_behind = left.describe();
  }
  if (!r.error.empty() || r.outside) return Message{with_jit(r.to_json(), jit), {}};
  // A reference's results stay on the device only where the host asks: the checker reads them
  // there (and its end wipes them).
  if (!return_buffers && !left.new_threads) {
    nlohmann::json body = with_jit(r.to_json(), jit);
    body["steps"] = step.json();
    return Message{body, {}};
  }
  if (auto e = bound.download(); !e.empty()) return reply_error(e);
  step("download_s");
  if (left.new_threads) {
    auto changed = changed_after_return(c, *s.buffers, bound);
    if (!changed) return reply_error(changed.error().message);
    if (!changed->empty()) {
      retired_ = true;  // the thread may write anywhere next
      r.changed_after_return = *changed;
    }
  }
  auto blob = buffers_blob(s);
  if (!blob) return reply_error(blob.error().message);
  step("blob_s");
  if (s.reference) {  // its results live on in the host only
    s.buffers->scrub();
    bound.wipe_device();
    step("scrub_s");
  }
  UniqueFd fd(dup(blob->fd()));
  nlohmann::json body = with_jit(r.to_json(), jit);
  body["steps"] = step.json();
  return Message{body, std::move(fd)};
}

Expected<Measurement> RequestServer::measure(PreparedCall& s, const TimingOptions& timing) {
  BoundCall& b = *s.bound;
  const ExecPlace& ex = b.place();
  if (ex.rt) {
    const auto& props = ex.rt->devices()[static_cast<size_t>(ex.ordinal)];
    ColdTarget target{b.input_ranges(), props.l2_bytes, [&] { return b.poison_outputs(); }, {}};
    // Fresh inputs on the device (fresh_inputs_protocol.hpp): the host's go carries the sample's
    // seed; its inputs are made here, on the device, before its eviction.
    FreshStage* stage = s.fresh && timing.mode == TimingMode::cold ? s.fresh.get() : nullptr;
    bool first = true;
    // The sample's outputs in place before the host is told it has ended (the checker may copy
    // them then): a .py call's results, copied into its outputs.
    auto settle = [&]() -> std::string {
      if (std::string e = b.collect(); !e.empty()) return e;
      if (int e = ex.rt->api().stream_synchronize(ex.stream); e != 0) return "after the sample: " + ex.rt->describe(e);
      return "";
    };
    if (stage)
      target.fresh = [&]() -> std::string {
        if (!first)
          if (std::string e = settle(); !e.empty()) return e;
        uint64_t seed = 0;
        std::string e = stage->next_seed(first, &seed);
        first = false;
        return e.empty() ? b.make_fresh_inputs(seed) : e;
      };
    auto m = measure_device([&] { return b.launch(s.fn); }, ex.rt->api(), ex.stream, props.sm_clock_khz / 1e3, timing, target);
    if (std::string e = m ? (stage ? settle() : b.collect()) : ""; !e.empty()) return make_error(e);  // the last call's results, untimed
    if (stage && m && !first)
      if (std::string e = stage->last(); !e.empty()) return make_error("fresh inputs: " + e);
    return m;
  }
  // Cold: every byte the call touches, guards included, leaves the caches before a sample.
  auto flush = [&] {
    for (auto* set : {&s.buffers->inputs, &s.buffers->outputs})
      for (auto& buf : *set) evict_from_cpu_caches(buf.raw(), buf.raw_size());
  };
  // Fresh inputs (fresh_inputs_protocol.hpp): the host told that the previous sample has ended,
  // and the next one's inputs awaited from it, in the buffers themselves (laid over the stage by
  // replace_buffers), outside the timed region.
  FreshStage* stage = s.fresh && timing.mode == TimingMode::cold ? s.fresh.get() : nullptr;
  std::string fresh_error;
  bool first = true;
  auto fresh = [&]() -> bool {
    if (!stage) return true;
    if (!first)
      if (std::string e = b.collect(); !e.empty()) {  // a .py call's results, into its outputs
        fresh_error = e;
        return false;
      }
    fresh_error = stage->next(first);
    first = false;
    if (!fresh_error.empty()) return false;
    b.save_inplace();  // an in-place target starts every call from these inputs
    return true;
  };
  auto m = measure_cpu([&] { return b.launch(s.fn); }, flush, timing, [&] { b.poison_outputs(); }, fresh);
  if (!fresh_error.empty()) return make_error("fresh inputs: " + fresh_error);
  if (std::string e = m ? b.collect() : ""; !e.empty()) return make_error(e);
  if (stage && m && !first)
    if (std::string e = stage->last(); !e.empty()) return make_error("fresh inputs: " + e);
  return m;
}

// A block of timed calls: inputs restored from the pristine copy, outputs rewritten before
// every call; the buffers after the last call go back, for the host to check.
Message RequestServer::block_on(PreparedCall& s, const TimingOptions& timing, bool return_buffers) {
  const ConcreteCase& c = s.c;
  Steps step;
  bool placed = false;
  if (auto e = s.replace_buffers(placement_draw_, placed); !e.empty()) return reply_error(e);
  if (placed) {
    step("place_s");
  } else if (s.bound->restore_pristine()) {  // on a device, from the copy kept there
    step("restore_s");
  } else if (s.pristine.empty()) {
    return reply_error(kOnDeviceOnly);
  } else {
    s.buffers->reset(c, s.inputs_of(s.pristine));
    step("reset_s");
    if (auto e = s.bound->upload(); !e.empty()) return reply_error(e);
    step("upload_s");
  }
  s.bound->save_inplace();  // every timed call of an in-place op starts from the case's inputs
  const ProcessState before = capture_process_state();
  const JitCount jit_before = jit_count(s.python);
  auto m = measure(s, timing);
  const JitCount jit = jit_count(s.python) - jit_before;
  if (m && jit.compiles > 0)
    m->notes.push_back(fmt::format("{} just-in-time compilation(s), {:.2f} s, during this block's calls (a new specialisation, not seen in the "
                                   "checked call): in its warm-up or its samples",
                                   jit.compiles, jit.seconds));
  const LeftBehind left = restore_process_state(before);
  step("measure_s");
  CallReply r;
  if (!m) {
    CallOutcome out = s.bound->finish_device();
    r.sticky = out.sticky;
    if (out.sticky) poisoned_ = true;
    const std::string msg = s.bound->plugin_message();
    r.error = fmt::format("{}{}{}", out.sticky ? out.error + ": " : "", m.error().message, msg.empty() ? "" : ": " + msg);
  }
  if (left.any()) {
    retired_ = true;
    r.left_behind = left.describe();
  }
  nlohmann::json body = with_jit(r.to_json(), jit);
  if (integrity_.captured())
    if (std::string changed = integrity_.check_slots(); !changed.empty()) {
      retired_ = true;  // what times the next block cannot be trusted either
      body["tampered"] = changed;
    }
  if (!m) return Message{body, {}};
  body["measurement"] = to_json(*m);
  if (!return_buffers) {  // the checker compares them on the device (device_check.hpp)
    body["steps"] = step.json();
    return Message{body, {}};
  }
  if (auto e = s.bound->download(); !e.empty()) return reply_error(e);
  step("download_s");
  auto blob = buffers_blob(s);
  if (!blob) return reply_error(blob.error().message);
  step("blob_s");
  body["steps"] = step.json();
  return Message{body, UniqueFd(dup(blob->fd()))};
}

// Mirror k of the prepared call, as shareable memory for the checker.
Message RequestServer::export_mirror(const ExportRequest& req, UniqueFd) {
  auto s = prepared(req.role);
  if (!s) return reply_error(s.error().message);
  int fd = -1;
  ExportReply reply;
  if (req.mirror < 0) return reply_error(fmt::format("no mirror {}", req.mirror));
  if (auto e = (*s)->bound->export_mirror(static_cast<std::size_t>(req.mirror), &fd, &reply.bytes); !e.empty()) return reply_error(e);
  UniqueFd owned(fd);
  return Message{reply, std::move(owned)};
}

// The prepared call's buffers as they are now (after a block the checker found wrong: the host judges).
Message RequestServer::buffers(const BuffersRequest& req, UniqueFd) {
  auto s = prepared(req.role);
  if (!s) return reply_error(s.error().message);
  if (auto e = (*s)->bound->download(); !e.empty()) return reply_error(e);
  auto blob = buffers_blob(**s);
  if (!blob) return reply_error(blob.error().message);
  return Message{CallReply{}.to_json(), UniqueFd(dup(blob->fd()))};
}

// The whole check of the worker's own code and GOT, asked for after a test's timing.
Message RequestServer::audit(const AuditRequest&, UniqueFd) {
  AuditReply reply;
  reply.watched = integrity_.captured();
  if (integrity_.captured())
    if (std::string changed = integrity_.check_all(); !changed.empty()) {
      retired_ = true;
      reply.tampered = changed;
    }
  return Message{reply, {}};
}

// ---------------------------------------------------------------------------------------------
// The checker's (device_check.hpp): this worker holds no plugin.

Message RequestServer::checked(const std::string& error) { return Message{CheckReply{error}, {}}; }

Message RequestServer::watch(const WatchRequest& req, UniqueFd expected) {
  auto place = place_for(req.device, req.device_index);
  if (!place) return checked(place.error().message);
  return checked(checker_.watch(*place, device_check_items_from_json(req.checks), std::move(expected), req.expected_bytes));
}
Message RequestServer::watch_mirror(const WatchMirrorRequest& req, UniqueFd memory) {
  return checked(checker_.watch_mirror(req.mirror, req.bytes, std::move(memory)));
}
Message RequestServer::watch_reference(const WatchReferenceRequest& req, UniqueFd memory) {
  return checked(checker_.watch_reference(req.mirror, req.bytes, req.offset, req.size, std::move(memory)));
}
Message RequestServer::stage(const StageRequest& req, UniqueFd) { return checked(checker_.stage(req.inputs)); }
Message RequestServer::keep_case(const KeepCaseRequest&, UniqueFd) { return checked(checker_.keep_case()); }
Message RequestServer::expect(const ExpectRequest&, UniqueFd expected) { return checked(checker_.expect(std::move(expected))); }
Message RequestServer::keep_sample(const KeepSampleRequest&, UniqueFd) { return checked(checker_.keep_sample()); }

Message RequestServer::verify(const VerifyRequest& req, UniqueFd) {
  return Message{to_json(checker_.verify(req.figures, req.kept)), {}};
}

// Against the reference's buffers now (its call on the kept sample's inputs), then the case's again.
Message RequestServer::verify_kept(const VerifyKeptRequest&, UniqueFd) {
  VerifyReply reply;
  reply.error = checker_.stage(0);
  if (reply.error.empty()) {
    const DeviceChecker::Verdict v = checker_.verify(false, true);
    reply.error = v.error;
    reply.ok = v.ok;
    reply.why = v.why;
  }
  if (std::string e = checker_.expect({}); reply.error.empty()) reply.error = e;
  return Message{to_json(reply), {}};
}

Message RequestServer::kept_home(const KeptHomeRequest&, UniqueFd) {
  auto blob = checker_.kept_blob();
  if (!blob) return reply_error(blob.error().message);
  return Message{CheckReply{}, UniqueFd(dup(blob->fd()))};
}

Message RequestServer::unwatch(const UnwatchRequest&, UniqueFd) {
  checker_.unwatch();
  return checked("");
}

}  // namespace bb
