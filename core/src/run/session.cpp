#include "run/session.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <sched.h>

#include <fmt/format.h>

#include "devices/device.hpp"
#include "devices/device_runtimes.hpp"
#include "devices/host_load.hpp"
#include "measure/cpu_pin.hpp"
#include "measure/device_peak.hpp"
#include "parallel.hpp"
#include "plan/jobs.hpp"
#include "plan/library_store.hpp"
#include "plan/plan.hpp"
#include "plan/provenance.hpp"
#include "plan/value_variants.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/interrupt.hpp"
#include "run/job_runner.hpp"
#include "run/scheduler.hpp"
#include "run/worker_pool.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/python_zygote.hpp"
#include "run/workers/sandbox.hpp"
#include "run/workers/syscall_filter.hpp"
#include "run/workers/worker_stock.hpp"
#include "run/workers/worker_walls.hpp"
#include "trace.hpp"
#include "worker/code_seal.hpp"

namespace bb {

namespace {

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

OpReport report_of(const OpPlan& p) {
  OpReport r;
  r.op = p.folder.name;
  r.manifest = p.folder.manifest.string();
  r.seed = p.manifest.seed;
  r.reference = p.reference.name;
  r.reference_kind = p.reference.kind == ReferenceChoice::Kind::library          ? "library"
                     : p.reference.kind == ReferenceChoice::Kind::implementation ? "implementation"
                                                                                 : "identity";
  r.baseline = p.baseline_names();
  for (const auto& i : p.impls) r.impls.push_back(i.name);
  r.cases = p.cases.size();
  r.warnings = p.warnings;
  for (const auto& f : p.failures) r.errors.push_back(f.error);
  return r;
}

OpReport report_of(const UnusableOp& u) {
  OpReport r;
  r.op = u.folder.name;
  r.manifest = u.folder.manifest.string();
  r.errors.push_back(u.error);
  return r;
}

// The walls of a worker that probes libraries or devices: the log directory hidden, a user of
// its own (the libraries it loads are the ones it probes).
WorkerWalls probe_walls(const SessionOptions& o, const std::filesystem::path& log_dir) { return walls_for(o, log_dir, {}, ""); }

// Where the run's requests go: `given`, else worker processes (the host with --no-isolate).
ExecutorFactory run_executors(const SessionOptions& o, ExecutorFactory given) {
  if (given) return given;
  return [&o]() -> std::unique_ptr<Executor> {
    if (o.isolate) return make_isolated_executor(o.worker_binary, o.worker_limits);
    return make_in_process_executor();
  };
}

// Executors that probe libraries and devices: their walls made when each is made (after the
// Python site is known: its folders must be readable by the worker's user).
ExecutorFactory probers(const SessionOptions& o, ExecutorFactory make) {
  return [&o, make = std::move(make)] {
    auto e = make();
    e->set_walls(probe_walls(o, o.log_dir));
    return e;
  };
}

SweepSelection sweep_selection(const SessionOptions& o) { return {o.root, o.ops, o.impls, o.cases, o.input_ids, o.python}; }

PlanOptions plan_options(const SessionOptions& o) {
  PlanOptions p;
  p.seed = o.seed;
  p.expansion = o.expansion;
  p.modes = o.modes;
  p.check_backwards = o.check_backwards;
  p.selected = o.impls;
  p.read_python = true;
  if (o.isolate) {  // libraries probed side by side, each in a worker of its own
    p.probe_timeout = std::min(p.probe_timeout, o.test_timeout);
    p.parallel = static_cast<int>(std::clamp(usable_cores(), 1u, 8u));
  }
  return p;
}

std::vector<std::filesystem::path> runtime_plugins() {
  std::vector<std::filesystem::path> found;
  for (const auto& dir : runtime_plugin_dirs())
    for (const auto& rt : runtime_rows()) {
      const auto p = std::filesystem::path(dir) / runtime_plugin_file(rt.name);
      std::error_code ec;
      if (std::filesystem::exists(p, ec) && std::find(found.begin(), found.end(), p) == found.end()) found.push_back(p);
    }
  return found;
}

// The worker slots: -j for the CPU; for each GPU kind in use, one per device (-j per device
// when nothing is timed). Without isolation, one slot does everything in this process.
Expected<std::vector<WorkerSlot>> worker_slots(const SessionOptions& o, const std::map<std::string, DeviceKind>& kinds) {
  std::vector<WorkerSlot> slots;
  if (!o.isolate) {
    WorkerSlot all{{std::string(kCpuDevice)}, o.device_ordinals.empty() ? 0 : o.device_ordinals.front(), "in-process"};
    for (const auto& [kind, d] : kinds)
      if (!is_cpu(kind)) all.kinds.push_back(kind);
    return std::vector<WorkerSlot>{all};
  }
  const int cpu_workers = cpu_worker_count(o);
  for (int i = 0; i < cpu_workers; ++i) slots.push_back({{std::string(kCpuDevice)}, 0, fmt::format("cpu#{}", i)});
  for (const auto& [kind, d] : kinds) {
    if (is_cpu(kind) || !d.available) continue;
    const std::vector<int> present = d.ordinals();
    std::vector<int> use = o.all_devices ? present : o.device_ordinals.empty() ? std::vector<int>{0} : o.device_ordinals;
    for (int ordinal : use)
      if (std::find(present.begin(), present.end(), ordinal) == present.end())
        return make_error(fmt::format("--devices: {} device {} does not exist; this machine has {} {} device(s){}", kind, ordinal,
                                      present.size(), kind, present.empty() ? "" : fmt::format(" ({})", fmt::join(present, ", "))));
    const int per_device = o.performance ? 1 : std::max(1, o.cpu_workers);  // -j as given (the default: one)
    for (int ordinal : use)
      for (int i = 0; i < per_device; ++i) slots.push_back({{kind}, ordinal, fmt::format("{}:{}#{}", kind, ordinal, i)});
  }
  return slots;
}

}  // namespace

Expected<SweepPlan> plan_session(const SessionOptions& o, ExecutorFactory executors, std::function<void()> python_found) {
  PlanOptions options = plan_options(o);
  options.python_found = python_found;
  // Worker processes of this binary: Python's are forked from one warm interpreter, started now
  // (on this thread, which outlives them all), its imports beside the plan's other work.
  if (!executors && o.isolate) {
    options.python_found = [&o, python_found] {
      PythonZygote::get().start(o.worker_binary, o.worker_limits.memory_bytes);
      if (python_found) python_found();
    };
    // Their kernel libraries imported once each, in interpreters forked from that one.
    options.python_implementations = [](const std::vector<std::string>& files) { PythonZygote::get().preload(files, 120); };
  }
  return plan_sweep(sweep_selection(o), probers(o, run_executors(o, std::move(executors))), options);
}

namespace {

// The pool's scheduler while it runs: SIGINT or SIGTERM cancels it (no new job) and kills the
// workers (the tests in flight are abandoned); run_session then reports what finished.
std::atomic<Scheduler*> g_running_scheduler{nullptr};

std::vector<std::string> libraries_of(const std::vector<OpPlan>& plans) {
  std::vector<std::string> out;
  for (const auto& p : plans)
    for (const auto& lib : p.folder.libraries) out.push_back(lib.string());
  return out;
}

// The steps of one run, each adding to the record and telling the reporters; run_session
// calls them in order.
class SessionRun {
 public:
  // `given`: the executors the caller chose (the unit tests' fakes), else none.
  SessionRun(const SessionOptions& o, RunRecord run, const std::vector<Reporter*>& reporters, ExecutorFactory given)
      : o_(o), run_(std::move(run)), reporters_(reporters), given_(given), make_executor_(run_executors(o, std::move(given))),
        make_prober_(probers(o, make_executor_)) {}

  // The record's start, the sandbox's state, the interrupt handlers.
  void start() {
    if (o_.isolate)
      install_interrupt_handlers([] {
        if (Scheduler* s = g_running_scheduler.load()) s->cancel();
        kill_all_workers();
      });
    run_.started_at = now_iso8601();
    if (o_.isolate) {
      remove_stale_cgroups();  // what earlier runs' abandoned workers left (Executor::abandon)
      // The walls of the workers (sandbox.hpp): what is up, and what could not be, said once.
      const auto& walls = sandbox_support();
      // A user of its own for each worker where the host can and the worker's files are readable
      // by others (not in a 0700 folder, as `mktemp -d` makes): said, with the path, where not.
      unreachable_ = walls.drop_user ? unreachable_for_workers(o_, linked_source_dirs(o_.root, {}, {})) : "";
      run_.host["sandbox"] = {{"cgroup_freezer", walls.freezer.empty() ? nlohmann::json() : nlohmann::json(walls.freezer)},
                              {"namespaces", walls.namespaces}, {"own_user", walls.drop_user && unreachable_.empty()},
                              {"syscall_filter", syscall_filter_supported() ? nlohmann::json(refused_syscalls()) : nlohmann::json()},
                              {"landlock_abi", landlock_supported() ? nlohmann::json(landlock_abi()) : nlohmann::json()},
                              {"code_sealed", code_seal_supported()},
                              {"off", walls.off}};
    }
    run_.shard = {o_.shard_index, o_.shard_count};
    run_.repeats = o_.repeats;
    run_.perf_p = o_.perf_p;
    run_.score_rule = o_.score_rule;
    each([&](Reporter& r) { r.run_started(run_); });
    if (o_.isolate) {
      for (const auto& off : sandbox_support().off) warn("worker sandbox: off: " + off);
      if (!unreachable_.empty())
        warn(fmt::format("worker sandbox: workers run as uid 0 without capabilities, not as users of their own: others cannot read {} "
                         "(chmod o+rx on it and the folders above it puts that wall up)",
                         unreachable_));
    }
  }

  // The ops, their libraries (each probed in a worker), references and baselines; told to the
  // reporters, the unusable ones first.
  Expected<SweepPlan> plan() {
    // A plan with Python files waits seconds for PyTorch's import: the GPUs are described beside
    // it instead of after it.
    auto planned = plan_session(o_, given_, [this] { describe_devices_early(); });
    if (!planned) return planned;
    for (const auto& u : planned->unusable) op_planned(report_of(u));
    for (const auto& p : planned->ops) op_planned(report_of(p));
    return planned;
  }

  // Every test; the sweep's identity, shared by its shards; this shard's part.
  Expected<std::vector<TestSpec>> sweep(const std::vector<OpPlan>& plans) {
    const auto all_tests = enumerate_tests(plans, o_.repeats, o_.performance, o_.timing);
    run_.provenance = describe_provenance(o_.root, plans, runtime_plugins());
    // A copy of each library by its hash, for compare --confirm (library_store.hpp): a few
    // milliseconds, once per content.
    if (auto kept = keep_libraries(o_.root, run_.provenance); !kept)
      warn(fmt::format("no copy of the libraries was kept (compare --confirm cannot re-time this run): {}", kept.error().message));
    run_.sweep_id = sweep_identity(plans, all_tests, run_.options, run_.provenance, o_.run_id);
    auto tests = shard_tests(all_tests, o_.shard_index, o_.shard_count);
    if (o_.resume && o_.resume->sweep_id != run_.sweep_id)
      return make_error(fmt::format("--resume {}: that run is another sweep (sweep id {}, this one {}): the root, the selection, the "
                                    "options or the seed differ",
                                    o_.resume->where, o_.resume->sweep_id, run_.sweep_id));
    total_ = tests.size();
    each([&](Reporter& r) { r.sweep_planned(run_, total_); });
    return tests;
  }

  // Whether the peaks' cache (`known`) holds any device of `kind`'s: a probe of it then measures
  // nothing (unless its device is another one).
  bool peaks_known(const nlohmann::json& known, const std::string& kind) const {
    if (!o_.performance) return true;
    for (const auto& [key, entry] : known.items())
      if (key.find("|" + kind + "|") != std::string::npos) return true;
    return false;
  }
  nlohmann::json device_probe(const std::string& kind, const nlohmann::json& known_peaks) const {
    return request_json(DevicesRequest{kind, o_.performance, known_peaks});
  }

  // The device kinds this machine has (a driver's device node), described while the plan waits
  // for Python's imports: their probes, on a thread of their own, for describe_devices. Not where
  // a probe would measure the device's peaks (nothing may run beside that), nor in-process.
  void describe_devices_early() {
    if (!o_.isolate || given_ || early_devices_.valid()) return;
    const nlohmann::json known_peaks = o_.performance ? read_device_peaks() : nlohmann::json::object();
    std::vector<std::string> kinds;
    for (const auto& rt : runtime_rows())
      if (const char* kind = rt.name; might_have_device(kind) && peaks_known(known_peaks, kind)) kinds.push_back(kind);
    if (kinds.empty()) return;
    std::map<std::string, nlohmann::json> probes;
    for (const auto& kind : kinds) probes[kind] = device_probe(kind, known_peaks);
    try {
      early_devices_ = std::async(std::launch::async, [probes, make = make_prober_] {
        std::map<std::string, ExecOutcome> out;
        auto executor = make();  // made, used and ended on this thread (executor.hpp)
        for (const auto& [kind, probe] : probes) {
          executor->recycle();
          out[kind] = executor->execute(probe, 120.0);
        }
        executor->recycle();
        return out;
      });
    } catch (const std::system_error&) {  // no thread: described after the plan, as before
    }
  }

  // What each device kind the tests use offers, asked of a worker once (the host never touches
  // a GPU), while the first jobs' workers start into `stock` beside it.
  void describe_devices(SweepContext& ctx, const std::vector<TestSpec>& tests, std::map<std::string, DeviceKind>& kinds, WorkerStock& stock) {
    // A device's peaks are measured on a quiet device: where the cache knows none of this
    // kind's, the probe will measure them, and nothing starts beside it.
    const nlohmann::json known_peaks = o_.performance ? read_device_peaks() : nlohmann::json::object();
    auto peaks_known = [&](const std::string& kind) { return this->peaks_known(known_peaks, kind); };
    // The stock serves device 0 of a run that uses it alone (below): none where the run asks for
    // other devices, or for every device of a host that shows several.
    auto stock_for = [&](const std::string& kind) {
      const bool zero_alone = o_.all_devices ? gpu_count_hint(kind) == 1 : o_.device_ordinals.empty() || o_.device_ordinals == std::vector<int>{0};
      return peaks_known(kind) && zero_alone;
    };
    // Those described beside the plan; one whose probe measured the peaks after all (another
    // device than the cache's) is asked again, on a quiet device.
    std::map<std::string, ExecOutcome> early = early_devices_.valid() ? early_devices_.get() : std::map<std::string, ExecOutcome>{};
    if (o_.isolate) {
      stock_first_workers(stock, ctx, tests, make_executor_, stock_for);
      ctx.stock = &stock;
    }
    auto executor = make_prober_();
    for (const auto& t : tests) {
      const std::string& kind = ctx.plans[t.op].impls[t.impl].device;
      if (kind.empty() || kinds.count(kind)) continue;
      // The probe cannot write the peaks' cache from behind its walls: the host gives it what
      // the cache knows and keeps what it measured (device_peak.hpp).
      const nlohmann::json probe = device_probe(kind, known_peaks);
      ExecOutcome out;
      if (auto it = early.find(kind);
          it != early.end() && it->second.status == ExecOutcome::Status::ok && !device_kind_from_json(it->second.reply).measured_now()) {
        out = std::move(it->second);
        trace_line({{"side", "session"}, {"what", "devices_described_early"}, {"kind", kind}});
      } else {
        executor->recycle();
        out = executor->execute(probe, 120.0);
      }
      if (out.status == ExecOutcome::Status::ok && stock.size() > 0 && device_kind_from_json(out.reply).measured_now()) {
        // Measured beside the stock's workers making their contexts (the cache knew another
        // device of this kind): measured again on a quiet device.
        stock.settle();
        executor->recycle();
        out = executor->execute(probe, 120.0);
      }
      executor->recycle();
      nlohmann::json d = out.status == ExecOutcome::Status::ok
                             ? out.reply
                             : nlohmann::json{{"name", kind}, {"available", false}, {"reason", "probing the device: " + out.detail}};
      if (out.status == ExecOutcome::Status::ok && o_.performance) remember_device_peaks(d);
      run_.devices.push_back(d);
      kinds[kind] = device_kind_from_json(d);
      kinds[kind].name = kind;  // the kind asked for, whatever the reply calls itself
      each([&](Reporter& r) { r.device_described(kinds[kind]); });
    }
  }

  // What cannot run here is SKIPPED now, with the reason (an implementation whose device is
  // missing is told once), and what a resumed run finished stands; returns the rest.
  std::vector<TestSpec> settle_unrunnable(const SweepContext& ctx, const std::vector<TestSpec>& tests) {
    run_.phases["tests"] = nlohmann::json::object();  // the tests' phases, summed (results.hpp)
    std::vector<TestSpec> runnable;
    std::set<std::pair<int, int>> told;
    for (const auto& t : tests) {
      const auto& p = ctx.plans[t.op];
      if (o_.resume) {  // finished in the run being resumed: its result stands
        auto it = o_.resume->finished.find({p.impls[t.impl].name, p.cases[t.case_pos].id, t.repeat});
        if (it != o_.resume->finished.end()) {
          finished(it->second, t.order);
          continue;
        }
      }
      const std::string& device = p.impls[t.impl].device;
      const DeviceKind* kind = device.empty() ? nullptr : &ctx.device_kinds.at(device);
      const SkipReason skip = skip_reason(p.impls[t.impl], p.manifest, p.cases[t.case_pos], kind);
      const std::string& why = skip.why;
      if (why.empty()) {
        runnable.push_back(t);
        continue;
      }
      const bool whole_impl = !kind || !kind->available || !p.impls[t.impl].unavailable.empty();
      if (whole_impl && told.insert({t.op, t.impl}).second) each([&](Reporter& r) { r.impl_skipped(p.impls[t.impl].name, device, why); });
      TestResult r = test_identity(ctx, t, 0);
      r.outcome.verdict = Verdict::skipped;
      r.outcome.message = why;
      r.outcome.refused = skip.refused;
      finished(std::move(r), t.order);
    }
    return runnable;
  }

  // Each worker slot takes jobs for its devices; their events reach the reporters here.
  void run_jobs(SweepContext& ctx, const std::vector<WorkerSlot>& slots, const std::vector<TestSpec>& runnable, WorkerStock& stock) {
    JobOptions job_options;
    job_options.performance = o_.performance;
    for (const auto& s : slots)
      for (const auto& k : s.kinds) ++job_options.workers_per_kind[k];
    Scheduler scheduler(make_jobs(runnable, ctx.plans, job_options));
    EventQueue events;
    HostLoadMonitor host_load;  // what else the machine does while the tests run
    host_load.start();
    {
      g_running_scheduler = &scheduler;  // a signal now cancels it
      if (interrupted()) scheduler.cancel();
      WorkerPool pool(slots, scheduler, ctx, make_executor_, events);
      while (auto e = events.pop()) {
        switch (e->kind) {
          case Event::Kind::started:
            each([&](Reporter& r) { r.test_started(e->result); });
            break;
          case Event::Kind::finished:
            finished(std::move(e->result), e->order);
            break;
          case Event::Kind::warning:
            warn(e->text);
            break;
          case Event::Kind::measured:
            run_.measured_time += e->seconds;
            break;
        }
      }
      pool.join();
      stock.abandon_all();
      g_running_scheduler = nullptr;
      for (const auto& w : pool.stats())
        run_.workers.push_back({{"name", w.name}, {"jobs", w.jobs}, {"tests", w.tests}, {"worker_starts", w.worker_starts},
                                {"started_ahead", w.started_ahead}, {"busy_s", w.busy_s}});
    }
    phase_done("run_s");
    // What the warm interpreter cost: its imports once, then each Python worker's fork.
    if (auto python = PythonZygote::get().summary(); !python.is_null()) run_.phases["python_interpreter"] = python;
    run_.host_load = host_load.stop();  // the console says when the host was busy (its summary)
  }

  // The scores, then the exit status: 2 an op or a library could not be used, 1 a test did
  // not pass (strict: or was refused), 0 all passed (or --skip-exit-code where every test was
  // SKIPPED).
  int exit_status(const SweepPlan& planned) {
    std::vector<std::pair<std::string, std::string>> impl_order;
    for (const auto& p : planned.ops)
      for (const auto& i : p.impls) impl_order.emplace_back(p.folder.name, i.name);
    run_.scores = compute_scores(run_.tests, impl_order, o_.perf_p, o_.score_rule);
    const bool all_passed = std::all_of(run_.tests.begin(), run_.tests.end(), [&](const TestResult& r) { return passes(r, o_.score_rule); });
    int code = planned.any_unusable() ? 2 : all_passed ? 0 : 1;
    if (const std::string why = too_many_skipped(); code == 0 && !why.empty()) {
      warn(why);
      code = 1;
    }
    const int status = finish(code);
    const bool all_skipped = !run_.tests.empty() && std::all_of(run_.tests.begin(), run_.tests.end(), [](const TestResult& r) {
      return r.outcome.verdict == Verdict::skipped;
    });
    if (status == 0 && all_skipped && o_.skip_exit_code) return *o_.skip_exit_code;
    return status;
  }

  // --fail-on-skip: where more of the tests than the share allowed were SKIPPED, why (the status
  // becomes 1); "" otherwise.
  std::string too_many_skipped() const {
    if (!o_.fail_on_skip || run_.tests.empty()) return "";
    const auto skipped = std::count_if(run_.tests.begin(), run_.tests.end(), [](const TestResult& r) { return r.outcome.verdict == Verdict::skipped; });
    const double percent = 100.0 * static_cast<double>(skipped) / static_cast<double>(run_.tests.size());
    if (skipped == 0 || percent <= *o_.fail_on_skip) return "";
    return fmt::format("{} of {} tests SKIPPED ({:.1f}%), more than --fail-on-skip {:g}% allows: exit status 1", skipped, run_.tests.size(), percent,
                       *o_.fail_on_skip);
  }

  // The wall-time breakdown: the time since the last phase ended, as `name`.
  void phase_done(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    run_.phases[name] = std::chrono::duration<double>(now - phase_start_).count();
    phase_start_ = now;
    trace_line({{"side", "session"}, {"cmd", name}});
  }

  // The record completed (results in sweep order, the signal that ended it) and handed to the
  // reporters; returns the exit status (128 + the signal where one ended the run).
  int finish(int code) {
    if (const int n = ignored_worker_signals())
      warn(fmt::format("ignored {} signal(s) sent to the host by its worker processes (a plugin signalling the host)", n));
    if (const int sig = interrupt_signal()) {  // reports for what finished, and the shell's status
      const char* abbrev = sigabbrev_np(sig);
      run_.interrupted = fmt::format("SIG{}", abbrev ? abbrev : "?");
      code = 128 + sig;
    }
    // Results in sweep order, whatever order the workers finished them in.
    std::vector<std::size_t> idx(run_.tests.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return order_[a] < order_[b]; });
    std::vector<TestResult> sorted;
    for (std::size_t i : idx) sorted.push_back(std::move(run_.tests[i]));
    run_.tests = std::move(sorted);
    run_.exit_code = code;
    run_.complete = run_.interrupted.empty();
    run_.finished_at = now_iso8601();
    run_.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    each([&](Reporter& r) { r.run_finished(run_); });
    trace_line({{"side", "session"}, {"cmd", "reported"}});
    return code;
  }

  int fatal(const std::string& message) {
    fmt::print(stderr, "error: {}\n", message);
    return finish(2);
  }

 private:
  template <class F>
  void each(F&& f) {
    for (auto* r : reporters_) f(*r);
  }
  void warn(const std::string& text) {
    each([&](Reporter& r) { r.warning(text); });
  }
  void op_planned(OpReport op) {
    run_.ops.push_back(std::move(op));
    each([&](Reporter& r) { r.op_planned(run_.ops.back()); });
  }
  // A test's result, at its place in the sweep.
  void finished(TestResult r, std::size_t place) {
    ++done_;
    auto& summed = run_.phases["tests"];
    for (const auto& [phase, s] : r.phases.seconds) summed[phase] = summed.value(phase, 0.0) + s;
    each([&](Reporter& rep) { rep.test_finished(r, done_, total_); });
    run_.tests.push_back(std::move(r));
    order_.push_back(place);
  }

  const SessionOptions& o_;
  RunRecord run_;
  std::string unreachable_;  // a path workers must read that others cannot (unreachable_for_workers), "" where none
  const std::vector<Reporter*>& reporters_;
  const ExecutorFactory given_, make_executor_, make_prober_;
  std::future<std::map<std::string, ExecOutcome>> early_devices_;  // describe_devices_early's probes
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point phase_start_ = started_;
  std::vector<std::size_t> order_;  // each result's place in the sweep
  std::size_t done_ = 0, total_ = 0;
};

}  // namespace

int run_session(const SessionOptions& o, RunRecord record, const std::vector<Reporter*>& reporters, ExecutorFactory executors) {
  SessionRun run(o, std::move(record), reporters, std::move(executors));
  run.start();

  // 1. Plan: the ops, their libraries (each probed in a worker), references and baselines.
  auto planned = run.plan();
  if (!planned) return run.fatal(planned.error().message);
  const std::vector<OpPlan>& plans = planned->ops;

  // 2. The sweep: every test; its identity, shared by its shards; this shard's part.
  auto tests = run.sweep(plans);
  if (!tests) return run.fatal(tests.error().message);
  run.phase_done("plan_s");
  if (interrupted()) return run.finish(1);

  // 3. Devices: what each kind in use offers; then the worker slots that will serve them.
  std::map<std::string, DeviceKind> device_kinds = {{std::string(kCpuDevice), cpu_device_kind()}};
  SweepContext ctx{plans, o, device_kinds, o.log_dir, libraries_of(plans)};
  WorkerStock stock;  // workers started ahead for the first jobs; abandoned, what no slot took, when the run ends
  run.describe_devices(ctx, *tests, device_kinds, stock);
  auto slots = worker_slots(o, device_kinds);
  if (!slots) return run.fatal(slots.error().message);
  // The stock serves a kind's device 0: where the run uses several devices (or another one),
  // the costliest jobs go first to any of them, and a missing device has none to serve. Ended
  // now, before any test. (A host of several GPUs run on device 0 alone keeps it.)
  for (const auto& [kind, d] : device_kinds) {
    if (is_cpu(kind)) continue;
    std::set<int> used;
    for (const auto& slot : *slots)
      if (std::find(slot.kinds.begin(), slot.kinds.end(), kind) != slot.kinds.end()) used.insert(slot.ordinal);
    if (!d.available || used != std::set<int>{0}) stock.retire_kind(kind);
  }
  run.phase_done("devices_s");

  // 4. What cannot run here is SKIPPED now, with the reason; the rest becomes jobs.
  const auto runnable = run.settle_unrunnable(ctx, *tests);

  // 5. Run: each worker takes jobs for its devices; their events reach the reporters.
  run.run_jobs(ctx, *slots, runnable, stock);

  // 6. Scores and the verdict.
  return run.exit_status(*planned);
}

}  // namespace bb
