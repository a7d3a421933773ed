#include "job_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "device.hpp"
#include "device_runtimes.hpp"
#include "interrupt.hpp"
#include "landlock.hpp"
#include "plugin_library.hpp"
#include "python_site.hpp"
#include "rerun_command.hpp"
#include "sandbox.hpp"
#include "test_driver.hpp"
#include "trace.hpp"
#include "measure/roofline.hpp"

namespace bb {

std::string unsupported_reason(const PluginInfo& info, const ConcreteCase& c) {
  if (auto why = dtype_mismatch(c, info.dtypes); !why.empty()) return why;
  for (const auto& p : info.preconditions) {
    auto ok = meets(c, p);  // evaluated on every case at planning: an error there made the library unusable
    if (!ok) return fmt::format("the implementation's precondition '{}' cannot be evaluated: {}", p, ok.error().message);
    if (!*ok) return fmt::format("the implementation's precondition '{}' does not hold", p);
  }
  return "";
}

SkipReason skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const DeviceKind* device_kind) {
  if (!impl.unavailable.empty()) return {impl.unavailable, false};
  if (impl.device.empty() || !device_kind)
    return {fmt::format("the implementation runs on {}; the op's tests run on {}", fmt::join(impl.info.devices, ", "), fmt::join(m.devices, ", ")),
            true};
  if (!is_cpu(impl.device) && !device_kind->available) return {device_kind->reason, false};
  std::string why = unsupported_reason(impl.info, c);
  const bool refused = !why.empty();
  return {std::move(why), refused};
}

namespace {

// Where the reference runs for a test on `device`: there, if its info record allows it (or it
// has none and the op runs nowhere else); otherwise the first device it lists, else the CPU.
std::string reference_device_for(const ReferenceChoice& ref, const Manifest& m, const std::string& device) {
  if (ref.kind == ReferenceChoice::Kind::identity) return "cpu";
  const auto& devs = ref.info.devices;
  if (devs.empty()) {
    const bool has_cpu = std::find(m.devices.begin(), m.devices.end(), "cpu") != m.devices.end();
    return has_cpu ? "cpu" : device;
  }
  if (std::find(devs.begin(), devs.end(), device) != devs.end()) return device;
  return devs.front();
}

TestRequest request_for(const SweepContext& ctx, const OpPlan& p, const ConcreteCase& c, Target target) {
  TestRequest req;
  req.manifest = p.folder.manifest.string();
  req.op = p.folder.name;
  req.case_index = c.index;
  req.impl = std::move(target);
  req.reference = p.reference.target();
  req.check_determinism = ctx.options.check_determinism;
  req.seed = ctx.options.seed;
  req.expansion = ctx.options.expansion;
  req.timing = ctx.options.timing;
  return req;
}

// The workers beside a job's implementation's: the reference's (its key: library, symbol,
// device) and, for timed tests, the baseline's (the reference's worker itself when they are
// the same function on the same device).
struct SideWorkers {
  std::string reference_device, reference_key;
  std::optional<Target> baseline;
  std::string baseline_key;  // "" when the reference's worker serves the baseline
};
SideWorkers side_workers(const OpPlan& p, const Job& job, bool timed) {
  SideWorkers s;
  s.reference_device = reference_device_for(p.reference, p.manifest, job.device);
  s.reference_key = reference_worker_key(p, job.device);
  if (timed)  // the op's baseline for this device, timed against it in a worker of its own
    for (const auto& b : p.baselines)
      if (b.device == job.device) s.baseline = b.target;
  if (s.baseline) {
    const std::string key = side_worker_key(*s.baseline, job.device);
    if (key != s.reference_key) s.baseline_key = key;
  }
  return s;
}

// The walls of the worker that serves `key`: `library`'s alone, or, for the slot's worker of
// every op's reference library, all of those.
WorkerWalls side_walls(const SweepContext& ctx, const std::string& key, const std::string& library, int cuda_ordinal) {
  if (!shares_references(key)) return walls_for(ctx, library, cuda_ordinal);
  std::vector<std::string> references;
  for (const auto& p : ctx.plans) {
    const Target t = p.reference.target();
    if (shares_references(side_worker_key(t, "cpu"))) references.push_back(t.library);
  }
  return walls_for(ctx, references, cuda_ordinal);
}

// The worker `slot` serves `key` from now on: the one started with the plan for that key on
// device `ordinal`, else a fresh one behind the walls for `library`, if it served something else
// (the old one ends off the critical path). True when it changed.
bool serve(std::unique_ptr<Executor>& slot, std::string& current, const std::string& key, const SweepContext& ctx,
           const std::string& library, WorkerSet& workers, int ordinal) {
  if (current == key && slot) return false;
  if (workers.make && workers.starts) {
    workers.starts->retire(std::move(slot));
    if (ctx.stock)
      if (auto stocked = ctx.stock->take(stocked_reference_key(key, ordinal))) {
        slot = std::move(stocked);
        current = key;
        return true;
      }
    slot = workers.make();
  } else {
    slot->recycle();
  }
  slot->set_walls(side_walls(ctx, key, library, workers.cuda_ordinal));
  current = key;
  return true;
}

// The device's bandwidth figures: (measured peak, theoretical), 0 when unknown.
std::pair<double, double> peak_bandwidth(const DeviceKind& kind, int ordinal) {
  const DeviceFacts* d = kind.device(ordinal);
  return d ? std::pair{d->measured_gbps, d->peak_bandwidth_gbps} : std::pair{0.0, 0.0};
}

}  // namespace

nlohmann::json warm_request(const std::string& device, int ordinal, const std::string& library) {
  nlohmann::json warm{{"cmd", "warm"}, {"device", device}, {"device_index", is_cpu(device) ? 0 : ordinal}};
  if (is_python_implementation(library)) warm["python"] = true;
  return warm;
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
      w->set_walls(side_walls(ctx, reference_worker_key(p0, device), p0.reference.target().library, -1));
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

TestResult test_identity(const SweepContext& ctx, const TestSpec& t, int ordinal) {
  const auto& p = ctx.plans[t.op];
  const auto& c = p.cases[t.case_pos];
  TestResult r;
  r.id.op = p.folder.name;
  r.id.impl = p.impls[t.impl].name;
  r.id.case_id = c.id;
  r.id.variant = c.variant;
  r.id.kind = case_kind_name(c.kind);
  r.id.device = p.impls[t.impl].device;
  r.id.device_index = is_cpu(r.id.device) || r.id.device.empty() ? 0 : ordinal;
  r.id.repeat = t.repeat;
  r.id.flops = c.flops;
  r.id.bytes = c.bytes;
  r.id.shapes = c.shapes();
  return r;
}

WorkerWalls walls_for(const SweepContext& ctx, const std::string& library, int cuda_ordinal) {
  return walls_for(ctx, library.empty() ? std::vector<std::string>{} : std::vector<std::string>{library}, cuda_ordinal);
}

WorkerWalls walls_for(const SweepContext& ctx, const std::vector<std::string>& own, int cuda_ordinal) {
  WorkerWalls w = walls_for(ctx.options, ctx.log_dir, ctx.libraries, own);
  if (cuda_ordinal < 0 || !ctx.options.isolate) return w;
  const auto kind = ctx.device_kinds.find("cuda");
  const DeviceFacts* d = kind == ctx.device_kinds.end() ? nullptr : kind->second.device(cuda_ordinal);
  // A MIG instance is named MIG-<uuid> where CUDA_VISIBLE_DEVICES names it: left as it is.
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!d || d->uuid.rfind("GPU-", 0) != 0 || d->name.find("MIG") != std::string::npos || (visible && std::strstr(visible, "MIG"))) return w;
  w.device_uuid = d->uuid;
  w.device_ordinal = cuda_ordinal;
  return w;
}

WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::string& library) {
  return walls_for(o, log_dir, libraries, library.empty() ? std::vector<std::string>{} : std::vector<std::string>{library});
}

WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::vector<std::string>& own_libraries) {
  WorkerWalls w;
  w.spec.enabled = o.isolate;
  const std::string library = own_libraries.size() == 1 ? own_libraries.front() : "";
  w.python = is_python_implementation(library);
  if (w.python) w.python_file = library;
  if (!o.isolate) return w;  // in the host: no walls, and nothing to probe for them
  const auto& support = sandbox_support();
  std::error_code ec;
  if (!log_dir.empty()) w.spec.hidden_dirs.push_back(std::filesystem::absolute(log_dir, ec).string());
  for (const auto& d : {std::filesystem::weakly_canonical(o.root, ec), std::filesystem::path(o.worker_binary).parent_path()})
    if (!d.empty() && d != "/") w.spec.readonly_dirs.push_back(d.string());
  // The Python packages every Python worker imports (and the warm interpreter, unwalled, imported
  // before them): a worker run as uid 0 without capabilities could otherwise write into them.
  for (const auto& d : python_package_dirs())
    if (d != "/") w.spec.readonly_dirs.push_back(d);
  // Its filesystem view (landlock.hpp): the system's trees, the run's folders, the Python
  // packages and the folders the environment names for libraries and modules.
  // The binary itself, not its folder: a build tree holds copies of references (test roots).
  w.spec.landlock_read = landlock_system_dirs();
  for (const auto& d : {std::filesystem::weakly_canonical(o.root, ec), std::filesystem::weakly_canonical(o.worker_binary, ec)})
    if (!d.empty() && d != "/") w.spec.landlock_read.push_back(d.string());
  for (const auto& d : runtime_plugin_dirs()) w.spec.landlock_read.push_back(d);
  for (const auto& d : landlock_extra_dirs(false)) w.spec.landlock_read.push_back(d);
  for (const auto& d : python_site_dirs()) w.spec.landlock_read.push_back(d);
  for (const auto& d : python_package_dirs()) w.spec.landlock_read.push_back(d);
  for (const char* var : {"LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH"})
    if (const char* value = std::getenv(var))
      for (std::string_view rest = value; !rest.empty();) {
        const auto colon = rest.find(':');
        const std::filesystem::path dir{std::string(rest.substr(0, colon))};
        if (!dir.empty()) w.spec.landlock_read.push_back(std::filesystem::absolute(dir, ec).string());
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      }
  // What the root links to outside itself (a build's manifests, data and Python files are links
  // to the op's source folder: BackendBenchPlugin.cmake): those folders read-only too.
  const auto linked = linked_source_dirs(o.root, libraries, own_libraries);
  for (const auto& d : linked) {
    w.spec.readonly_dirs.push_back(d);
    w.spec.landlock_read.push_back(d);
  }
  std::set<std::filesystem::path> own;
  for (const auto& lib : own_libraries) own.insert(std::filesystem::weakly_canonical(lib, ec));
  for (const auto& lib : libraries) {
    const auto other = std::filesystem::weakly_canonical(lib, ec);
    if (!own.count(other)) w.spec.hidden_files.push_back(other.string());
  }
  // A user of its own where everything it must read is readable by others; else uid 0 without
  // any capability.
  if (support.drop_user) {
    const bool reachable = unreachable_for_workers(o, linked).empty();
    w.own_user = reachable;
    w.drop_capabilities = !reachable;
  }
  return w;
}

std::vector<std::string> linked_source_dirs(const std::filesystem::path& root, const std::vector<std::string>& libraries,
                                            const std::vector<std::string>& own_libraries) {
  std::error_code ec;
  const auto real_root = std::filesystem::weakly_canonical(root, ec);
  std::set<std::filesystem::path> op_dirs, found;
  for (const auto* list : {&libraries, &own_libraries})
    for (const auto& lib : *list) op_dirs.insert(std::filesystem::path(lib).parent_path());
  // No library named (a worker that probes the root's libraries): every op folder, every entry.
  const bool whole = libraries.empty() && own_libraries.empty();
  if (whole)
    for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) op_dirs.insert(it->path());
  auto inside = [&](const std::filesystem::path& p) {
    const auto rel = p.lexically_relative(real_root);
    return !real_root.empty() && !rel.empty() && *rel.begin() != "..";
  };
  for (const auto& dir : op_dirs) {
    std::vector<std::filesystem::path> entries = {dir / "gen_input.yaml", dir / "gen_input.py", dir / "data"};
    if (whole)
      for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    ec.clear();
    for (const auto* list : {&libraries, &own_libraries})
      for (const auto& lib : *list)
        if (std::filesystem::path(lib).parent_path() == dir) entries.emplace_back(lib);
    for (const auto& e : entries) {
      if (!std::filesystem::is_symlink(e, ec)) continue;
      const auto real = std::filesystem::canonical(e, ec);
      if (ec || inside(real)) continue;
      found.insert(std::filesystem::is_directory(real, ec) ? real : real.parent_path());
    }
  }
  std::vector<std::string> out;
  for (const auto& d : found)
    if (d != "/" && !d.empty()) out.push_back(d.string());
  return out;
}

std::string unreachable_for_workers(const SessionOptions& o, const std::vector<std::string>& linked) {
  std::error_code ec;
  std::vector<std::string> paths = {o.worker_binary, std::filesystem::absolute(o.root, ec).string()};
  paths.insert(paths.end(), linked.begin(), linked.end());
  for (const auto& dir : runtime_plugin_dirs())
    if (std::filesystem::exists(dir, ec)) paths.push_back(dir);
  for (const auto& dir : python_site_dirs()) paths.push_back(dir);
  for (const auto& p : paths)
    if (!others_can_reach(p)) return p;
  return "";
}

void start_job_workers(const Job& job, int ordinal, WorkerSet& workers, SweepContext& ctx, bool impl_fresh) {
  if (!workers.starts || job.tests.empty()) return;
  const auto& o = ctx.options;
  const auto& p = ctx.plans[job.op];
  bool timed = false, device_case = false;
  for (const auto& test : job.tests) {
    const auto& c = p.cases[test.case_pos];
    timed = timed || (o.performance && c.kind == CaseKind::performance);
    std::size_t bytes = 0;
    for (const auto& t : c.inputs) bytes += t.nbytes();
    for (const auto& t : c.outputs) bytes += t.nbytes();
    device_case = device_case || bytes >= default_device_check_min_bytes();
  }
  WorkerStarts& starts = *workers.starts;
  if (impl_fresh) starts.warm(*workers.impl, warm_request(job.device, ordinal, p.impls[job.impl].library.string()), o.test_timeout);
  const SideWorkers side = side_workers(p, job, timed);
  if (serve(workers.reference, workers.reference_key, side.reference_key, ctx, p.reference.target().library, workers, ordinal))
    starts.warm(*workers.reference, warm_request(side.reference_device, ordinal, p.reference.target().library), o.test_timeout);
  // The baseline's worker serves timed blocks only: the tests' first timed block waits for it
  // (TestWorkers::quiet), not their correctness.
  if (!side.baseline_key.empty() && serve(workers.baseline, workers.baseline_key, side.baseline_key, ctx, side.baseline->library, workers, ordinal))
    starts.warm(*workers.baseline, warm_request(job.device, ordinal, side.baseline->library), o.test_timeout, true);
  // The checker compares the buffers of device cases of device_check_min_bytes and more, on the
  // device (device_check.hpp): its context, once, with the first job that has such a case.
  if (workers.checker && !workers.checker_warm && !is_cpu(job.device) && device_case) {
    starts.warm(*workers.checker, warm_request(job.device, ordinal), o.test_timeout);
    workers.checker_warm = true;
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

void run_job(const Job& job, int ordinal, WorkerSet& workers, SweepContext& ctx, const JobEvents& events) {
  const auto& o = ctx.options;
  const auto& p = ctx.plans[job.op];
  const auto& impl = p.impls[job.impl];
  for (const auto& t : job.tests) {
    if (interrupted()) return;  // the run is stopping: no new test
    const auto& c = p.cases[t.case_pos];
    const TestResult id = test_identity(ctx, t, ordinal);
    events.started(id);
    TestRequest req = request_for(ctx, p, c, Target{Target::Kind::kernel_impl, impl.library.string()});
    req.time = o.performance && c.kind == CaseKind::performance;
    req.device = job.device;
    req.device_index = id.id.device_index;
    req.declared_supported = !impl.info.preconditions.empty();  // it runs: the preconditions hold (skip_reason)
    const SideWorkers side = side_workers(p, job, req.time);
    req.reference_device = side.reference_device;
    req.baseline = side.baseline;
    serve(workers.reference, workers.reference_key, side.reference_key, ctx, req.reference.library, workers, id.id.device_index);
    TestWorkers w{workers.impl.get(), workers.reference.get(), nullptr, workers.checker.get(), workers.quiet};
    if (req.baseline) {
      if (side.baseline_key.empty()) {
        w.baseline = workers.reference.get();
      } else {
        serve(workers.baseline, workers.baseline_key, side.baseline_key, ctx, req.baseline->library, workers, id.id.device_index);
        w.baseline = workers.baseline.get();
      }
    }
    DriverLimits limits;
    limits.call_timeout = o.test_timeout;
    limits.device_check_min_bytes = default_device_check_min_bytes();
    // The physical floor on devices only: a CPU's cold data is not all from DRAM (the
    // prefetchers, the L3 the flush leaves), and its copy bandwidth reads low on a loaded host.
    if (!is_cpu(job.device)) limits.peak_bytes_per_second = peak_bandwidth(ctx.device_kinds.at(job.device), id.id.device_index).first * 1e9;
    const auto t0 = std::chrono::steady_clock::now();
    TestResult out = run_test(req, w, limits);  // the host's verdict and figures, under the test's identity
    if (o.worker_limits.memory_bytes && out.outcome.message.find("bad_alloc") != std::string::npos)
      out.outcome.message += fmt::format(" (a worker's memory limit is {:.1f} GiB: --worker-memory-limit)", o.worker_limits.memory_bytes / 1073741824.0);
    out.phases.seconds["host_s"] = std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - out.phases.duration);
    if (interrupted()) return;  // abandoned in flight (its worker was killed): not a finished test
    out.id = id.id;  // the identity is the host's, set once (test_identity)
    if (out.outcome.verdict == Verdict::crash) {  // where, and the line that runs it again in the foreground
      if (!out.outcome.crash.is_object()) out.outcome.crash = nlohmann::json::object();
      out.outcome.crash["rerun"] = rerun_command(o, out.id);
    }
    if (out.performance.timing) events.measured(out.performance.timing->measured_time + out.performance.timing->baseline_measured_time);
    if (out.outcome.verdict == Verdict::pass && out.performance.timing) {
      if (out.performance.gbps && !is_cpu(job.device)) {
        const auto [measured, theoretical] = peak_bandwidth(ctx.device_kinds.at(job.device), id.id.device_index);
        if (measured > 0) out.performance.peak_pct = *out.performance.gbps / measured * 100;
        if (theoretical > 0) out.performance.peak_pct_theoretical = *out.performance.gbps / theoretical * 100;
      }
      if (out.id.flops && !is_cpu(job.device)) {
        const auto& kind = ctx.device_kinds.at(job.device);
        const std::string compute = compute_kind_for(c.inputs.empty() ? DType::float32 : c.inputs.front().dtype);
        const auto [measured, theoretical] = peak_bandwidth(kind, id.id.device_index);
        const DeviceFacts* facts = kind.device(id.id.device_index);
        if (auto rl = roofline(out.id.flops, out.id.bytes, out.performance.timing->stats.median, measured, facts ? facts->peak_tflops(compute) : 0.0)) {
          out.performance.roofline_pct = rl->pct;
          out.performance.roofline_bound = rl->bound;
          out.performance.roofline_compute = compute;
        }
      }
    } else {
      out.performance = {};  // an incorrect implementation is never reported with a time
    }
    events.finished(std::move(out), t.order);
  }
}

}  // namespace bb
