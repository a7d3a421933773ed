#include "run/workers/worker_supply.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "plugin_library.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/sweep_context.hpp"
#include "run/workers/worker_walls.hpp"
#include "trace.hpp"

namespace bb {

namespace {
// The walls of the worker that serves `key`: `library`'s alone, or, for the slot's worker of
// every op's reference library, all of those.
WorkerWalls side_walls(const SweepContext& ctx, const std::string& key, const std::string& library, SlotDevice device) {
  if (!shares_references(key)) return walls_for(ctx, library, device);
  std::vector<std::string> references;
  for (const auto& p : ctx.plans) {
    const Target t = p.reference.target();
    if (shares_references(side_worker_key(t, std::string(kCpuDevice)))) references.push_back(t.library);
  }
  return walls_for(ctx, references, device);
}
}  // namespace

std::string reference_device_for(const ReferenceChoice& ref, const Manifest& m, const std::string& device) {
  if (ref.kind == ReferenceChoice::Kind::identity) return std::string(kCpuDevice);
  const auto& devs = ref.info.devices;
  if (devs.empty()) {
    const bool has_cpu = std::any_of(m.devices.begin(), m.devices.end(), [](const std::string& d) { return is_cpu(d); });
    return has_cpu ? std::string(kCpuDevice) : device;
  }
  if (std::find(devs.begin(), devs.end(), device) != devs.end()) return device;
  return devs.front();
}

SideWorkers side_workers(const OpPlan& p, const Job& job, bool timed, Mode mode) {
  SideWorkers s;
  s.reference_device = reference_device_for(p.reference, p.manifest, job.device);
  // Finite differences of the forward (a reference with no backward) run on the CPU.
  if (needs_backward(mode) && !p.reference.has_backward) s.reference_device = std::string(kCpuDevice);
  s.reference_key = side_worker_key(p.reference.target(), s.reference_device);
  if (timed)  // the op's baseline for this device, timed against it in a worker of its own; a bwd test's: its backward
    for (const auto& b : p.baselines)
      if (b.device == job.device && (!needs_backward(mode) || b.has_backward)) {
        s.baseline = b.target;
        s.baseline->pass = pass_of(mode);
      }
  if (s.baseline) {
    const std::string key = side_worker_key(*s.baseline, job.device);
    if (key != s.reference_key) s.baseline_key = key;
  }
  return s;
}

nlohmann::json warm_request(const std::string& device, int ordinal, const std::string& library) {
  return request_json(WarmRequest{device, is_cpu(device) ? 0 : ordinal, is_python_implementation(library)});
}

std::string side_worker_key(const Target& t, const std::string& device) {
  if (t.kind == Target::Kind::reference && !t.library.empty() && !is_python_implementation(t.library)) return fmt::format("references|{}", device);
  return fmt::format("{}|{}|{}", t.library, static_cast<int>(t.kind), device);
}

bool shares_references(const std::string& key) { return key.rfind("references|", 0) == 0; }

std::string reference_worker_key(const OpPlan& p, const std::string& device) {
  return side_worker_key(p.reference.target(), reference_device_for(p.reference, p.manifest, device));
}

void stock_first_workers(WorkerStock& stock, const SweepContext& ctx, const std::vector<TestSpec>& tests,
                         const std::function<std::unique_ptr<Executor>()>& make, const std::function<bool(const std::string&)>& ready_for) {
  std::map<std::string, std::vector<std::pair<int, int>>> first;  // device kind -> its first implementations
  for (const auto& t : tests) {
    const std::string& device = ctx.plans[t.op].impls[t.impl].device;
    if (device.empty() || is_cpu(device)) continue;
    // Not one whose jobs are deferred (a kernel library imported meanwhile): stocked now, its
    // worker would import the library itself, and its jobs come last.
    if (ctx.plans[t.op].impls[t.impl].imports_packages) continue;
    auto& impls = first[device];
    const std::pair<int, int> id{t.op, t.impl};
    if (impls.size() < kStockedImpls && std::find(impls.begin(), impls.end(), id) == impls.end()) impls.push_back(id);
  }
  for (const auto& [device, impls] : first) {
    if (!might_have_device(device) || !ready_for(device)) continue;
    const double timeout = ctx.options.test_timeout;
    const auto& p0 = ctx.plans[impls.front().first];
    const std::string ref_device = reference_device_for(p0.reference, p0.manifest, device);
    if (!is_cpu(ref_device)) {
      auto w = make();
      w->set_walls(side_walls(ctx, reference_worker_key(p0, device), p0.reference.target().library, SlotDevice{}));
      stock.start(stocked_reference_key(reference_worker_key(p0, device), 0), ref_device, std::move(w),
                  warm_request(ref_device, 0, p0.reference.target().library), timeout);
    }
    for (const auto& [op, impl] : impls) {
      auto w = make();
      w->set_walls(walls_for(ctx, ctx.plans[op].impls[impl].library.string()));
      stock.start(stocked_impl_key(op, impl, device, 0), device, std::move(w), warm_request(device, 0, ctx.plans[op].impls[impl].library.string()),
                  timeout);
    }
  }
}

SlotWorkers::SlotWorkers(const SweepContext& ctx) : ctx_(ctx) {}

SlotWorkers::SlotWorkers(const SweepContext& ctx, std::string name, int ordinal, SlotDevice device, std::function<std::unique_ptr<Executor>()> make)
    : ctx_(ctx), name_(std::move(name)), ordinal_(ordinal), device_(device), make_(std::move(make)) {
  impl = make_();
  reference = make_();
  baseline = make_();
  if (!ctx_.options.isolate) {
    make_ = nullptr;  // in the host: recycled in place
    return;
  }
  starts_ = std::make_unique<WorkerStarts>(true);
  checker = make_();
  checker->set_walls(walls_for(ctx_, "", device_));  // it may see no library
}

SlotWorkers::~SlotWorkers() { end(); }

bool SlotWorkers::serve(std::unique_ptr<Executor>& slot, std::string& current, const std::string& key, const std::string& library, int ordinal) {
  if (current == key && slot) return false;
  if (make_ && starts_) {
    starts_->retire(std::move(slot));
    if (ctx_.stock)
      if (auto stocked = ctx_.stock->take(stocked_reference_key(key, ordinal))) {
        slot = std::move(stocked);
        current = key;
        return true;
      }
    slot = make_();
  } else {
    slot->recycle();
  }
  slot->set_walls(side_walls(ctx_, key, library, device_));
  current = key;
  return true;
}

bool SlotWorkers::switch_impl(const Job& job, bool& fresh) {
  fresh = false;
  const std::pair<int, int> now{job.op, job.impl};
  if (now == serving_ && impl) return false;
  serving_ = now;
  std::unique_ptr<Executor> done = std::move(impl);  // ends off the critical path
  auto ready = ctx_.stock ? ctx_.stock->take(stocked_impl_key(job.op, job.impl, job.device, ordinal_)) : nullptr;
  if (!ready) ready = spare_.take(now);
  if (ready) {
    impl = std::move(ready);
    ++started_ahead_;
  } else {
    impl = make_ ? make_() : std::move(done);
    if (!make_ && impl) impl->recycle();
    impl->set_walls(walls_for(ctx_, ctx_.plans[job.op].impls[job.impl].library.string(), device_));
    fresh = true;
  }
  if (done && starts_) starts_->retire(std::move(done));
  return true;
}

void SlotWorkers::spare_for(const Job& next) {
  if (!make_ || spare_.held()) return;
  if (ctx_.stock && ctx_.stock->holds(stocked_impl_key(next.op, next.impl, next.device, ordinal_))) return;
  const std::string library = ctx_.plans[next.op].impls[next.impl].library.string();
  auto worker = make_();
  worker->set_walls(walls_for(ctx_, library, device_));
  spare_.start(std::move(worker), {next.op, next.impl}, warm_request(next.device, ordinal_, library), ctx_.options.test_timeout);
}

void SlotWorkers::start_for(const Job& job, bool impl_fresh) {
  if (!starts_ || job.tests.empty()) return;
  const int ordinal = ordinal_;
  const auto& o = ctx_.options;
  const auto& p = ctx_.plans[job.op];
  bool timed = false, any_fwd = false, device_case = false;
  for (const auto& test : job.tests) {
    const auto& c = p.cases[test.case_pos];
    const bool t = o.performance && c.kind == CaseKind::performance;
    timed = timed || t;
    any_fwd = any_fwd || c.mode == Mode::fwd;
    std::size_t bytes = 0;
    for (const auto& t : c.inputs) bytes += t.nbytes();
    for (const auto& t : c.outputs) bytes += t.nbytes();
    device_case = device_case || bytes >= default_device_check_min_bytes();
  }
  WorkerStarts& starts = *starts_;
  if (impl_fresh) starts.warm(*impl, warm_request(job.device, ordinal, p.impls[job.impl].library.string()), o.test_timeout);
  const SideWorkers side = side_workers(p, job, timed, any_fwd ? Mode::fwd : Mode::bwd);
  if (serve(reference, reference_key, side.reference_key, p.reference.target().library, ordinal))
    starts.warm(*reference, warm_request(side.reference_device, ordinal, p.reference.target().library), o.test_timeout);
  // The baseline's worker serves timed blocks only: the tests' first timed block waits for it
  // (TestWorkers::quiet), not their correctness.
  if (!side.baseline_key.empty() && serve(baseline, baseline_key, side.baseline_key, side.baseline->library, ordinal))
    starts.warm(*baseline, warm_request(job.device, ordinal, side.baseline->library), o.test_timeout, true);
  // The checker compares the buffers of device cases of device_check_min_bytes and more, on the
  // device (device_check.hpp): its context, once, with the first job that has such a case.
  if (checker && !checker_warm_ && !is_cpu(job.device) && device_case) {
    starts.warm(*checker, warm_request(job.device, ordinal), o.test_timeout);
    checker_warm_ = true;
  }
  // A worker that could not make its context (a device another worker still held, ending
  // beside it: a plugin that took every byte of memory) starts again once every worker that
  // was ending has ended; its first request says what is still wrong.
  const auto waiting = std::chrono::steady_clock::now();
  const auto failed = starts.wait_started();
  if (tracing())
    trace_line({{"side", "start"}, {"cmd", "job_wait"}, {"impl", p.impls[job.impl].name}, {"fresh", impl_fresh}, {"slot", fmt::format("{}:{}", job.device, ordinal)},
                {"round_trip_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count()}});
  if (failed.empty()) return;
  starts.settle();
  for (Executor* w : failed) {
    w->recycle();
    w->launch();
  }
}

TestWorkers SlotWorkers::for_test(const OpPlan& p, const SideWorkers& side, int device_index) {
  serve(reference, reference_key, side.reference_key, p.reference.target().library, device_index);
  TestWorkers w{impl.get(), reference.get(), nullptr, checker.get(), [this] { quiet(); }};
  if (side.baseline) {
    if (side.baseline_key.empty()) {
      w.baseline = reference.get();
    } else {
      serve(baseline, baseline_key, side.baseline_key, side.baseline->library, device_index);
      w.baseline = baseline.get();
    }
  }
  return w;
}

void SlotWorkers::quiet() {
  const auto t0 = std::chrono::steady_clock::now();
  spare_.settle();
  const auto t1 = std::chrono::steady_clock::now();
  if (starts_) starts_->settle();
  const auto t2 = std::chrono::steady_clock::now();
  if (ctx_.stock) ctx_.stock->settle();
  if (tracing()) {
    const auto t3 = std::chrono::steady_clock::now();
    auto s = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    trace_line({{"side", name_}, {"cmd", "quiet"}, {"spare_s", s(t0, t1)}, {"starts_s", s(t1, t2)}, {"stock_s", s(t2, t3)}});
  }
}

void SlotWorkers::end() {
  if (ended_) return;
  ended_ = true;
  spare_.take({-1, -1});  // retired, if one is held
  if (!starts_) return;  // in place: the executors end with this object
  // Nothing is left to ask of the workers, and waiting for the kernel to tear down their device
  // contexts (0.1 s each, one after another) is no part of the answer.
  starts_->wait_all_started();
  for (auto* e : {&impl, &reference, &baseline, &checker})
    if (*e) (*e)->abandon();
  starts_->settle();  // the ends already under way
}

}  // namespace bb
