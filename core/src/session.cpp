#include "session.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "device.hpp"
#include "device_peak.hpp"
#include "discovery.hpp"
#include "executor.hpp"
#include "interrupt.hpp"
#include "job_runner.hpp"
#include "parallel.hpp"
#include "jobs.hpp"
#include "plan.hpp"
#include "generated_manifest.hpp"
#include "host_load.hpp"
#include "library_store.hpp"
#include "plugin_library.hpp"
#include "provenance.hpp"
#include "python_site.hpp"
#include "sandbox.hpp"
#include "scheduler.hpp"
#include "trace.hpp"
#include "worker_pool.hpp"

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
  p.random_cases = o.random_cases;
  p.selected = o.impls;
  if (o.isolate) {  // libraries probed side by side, each in a worker of its own
    p.probe_timeout = std::min(p.probe_timeout, o.test_timeout);
    p.parallel = static_cast<int>(std::clamp(usable_cores(), 1u, 8u));
  }
  return p;
}

std::vector<std::filesystem::path> runtime_plugins() {
  std::vector<std::filesystem::path> found;
  for (const auto& dir : runtime_plugin_dirs())
    for (const char* name : {"cuda", "hip"}) {
      const auto p = std::filesystem::path(dir) / (std::string("backendbench_") + name + ".so");
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
    WorkerSlot all{{"cpu"}, o.device_ordinals.empty() ? 0 : o.device_ordinals.front(), "in-process"};
    for (const auto& [kind, d] : kinds)
      if (kind != "cpu") all.kinds.push_back(kind);
    return std::vector<WorkerSlot>{all};
  }
  for (int i = 0; i < o.cpu_workers; ++i) slots.push_back({{"cpu"}, 0, fmt::format("cpu#{}", i)});
  for (const auto& [kind, d] : kinds) {
    if (kind == "cpu" || !d.available) continue;
    const std::vector<int> present = d.ordinals();
    std::vector<int> use = o.all_devices ? present : o.device_ordinals.empty() ? std::vector<int>{0} : o.device_ordinals;
    for (int ordinal : use)
      if (std::find(present.begin(), present.end(), ordinal) == present.end())
        return make_error(fmt::format("--devices: {} device {} does not exist; this machine has {} {} device(s){}", kind, ordinal,
                                      present.size(), kind, present.empty() ? "" : fmt::format(" ({})", fmt::join(present, ", "))));
    const int per_device = o.performance ? 1 : o.cpu_workers;
    for (int ordinal : use)
      for (int i = 0; i < per_device; ++i) slots.push_back({{kind}, ordinal, fmt::format("{}:{}#{}", kind, ordinal, i)});
  }
  return slots;
}

}  // namespace

nlohmann::json session_options_json(const SessionOptions& o) {
  const auto& r = o.timing.rule;
  return {{"root", o.root.string()},
          {"ops", o.ops},
          {"impls", o.impls},
          {"cases", o.cases},
          {"input_ids", o.input_ids},
          {"isolate", o.isolate},
          {"test_timeout_s", o.test_timeout},
          {"performance", o.performance},
          {"check_determinism", o.check_determinism},
          {"seed", o.seed ? nlohmann::json(*o.seed) : nlohmann::json()},
          {"random_cases", o.random_cases},
          {"min_samples", r.min_samples},
          {"max_samples", r.max_samples},
          {"min_time_s", r.min_time},
          {"max_noise", r.max_noise},
          {"timeout_s", r.timeout},
          {"warmup_time_s", o.timing.warmup_time},
          {"timing_mode", timing_mode_name(o.timing.mode)},
          {"blocking_kernel", o.timing.blocking_kernel},
          {"l2_discard", o.timing.l2_discard},
          {"throttle_threshold", o.timing.throttle_threshold},
          {"throttle_recovery_delay_s", o.timing.throttle_recovery_delay},
          {"perf_p", o.perf_p},
          {"devices", o.all_devices ? nlohmann::json("all") : nlohmann::json(o.device_ordinals)},
          {"jobs", o.cpu_workers},
          {"shard", fmt::format("{}/{}", o.shard_index + 1, o.shard_count)},
          {"repeats", o.repeats},
          {"run_id", o.run_id}};
}

Expected<SweepPlan> plan_session(const SessionOptions& o, ExecutorFactory executors) {
  return plan_sweep(sweep_selection(o), probers(o, run_executors(o, std::move(executors))), plan_options(o));
}

namespace {
// The pool's scheduler while it runs: SIGINT or SIGTERM cancels it (no new job) and kills the
// workers (the tests in flight are abandoned); run_session then reports what finished.
std::atomic<Scheduler*> g_running_scheduler{nullptr};
}  // namespace

int run_session(const SessionOptions& o, RunRecord run, const std::vector<Reporter*>& reporters, ExecutorFactory executors) {
  const auto started = std::chrono::steady_clock::now();
  if (o.isolate)
    install_interrupt_handlers([] {
      if (Scheduler* s = g_running_scheduler.load()) s->cancel();
      kill_all_workers();
    });
  run.started_at = now_iso8601();
  if (o.isolate) {
    remove_stale_cgroups();  // what earlier runs' abandoned workers left (Executor::abandon)
    // The walls of the workers (sandbox.hpp): what is up, and what could not be, said once.
    const auto& walls = sandbox_support();
    run.host["sandbox"] = {{"cgroup_freezer", walls.freezer.empty() ? nlohmann::json() : nlohmann::json(walls.freezer)},
                            {"namespaces", walls.namespaces}, {"own_user", walls.drop_user}, {"off", walls.off}};
  }
  run.shard = {o.shard_index, o.shard_count};
  run.repeats = o.repeats;
  run.perf_p = o.perf_p;
  for (auto* r : reporters) r->run_started(run);
  if (o.isolate)
    for (const auto& off : sandbox_support().off)
      for (auto* r : reporters) r->warning("worker sandbox: off: " + off);
  std::vector<std::size_t> order;  // each result's place in the sweep
  auto phase_start = started;
  auto phase_done = [&](const char* name) {  // the wall-time breakdown
    const auto now = std::chrono::steady_clock::now();
    run.phases[name] = std::chrono::duration<double>(now - phase_start).count();
    phase_start = now;
    trace_line({{"side", "session"}, {"cmd", name}});
  };
  auto finish = [&](int code) {
    if (const int n = ignored_worker_signals())
      for (auto* rep : reporters)
        rep->warning(fmt::format("ignored {} signal(s) sent to the host by its worker processes (a plugin signalling the host)", n));
    if (const int sig = interrupt_signal()) {  // reports for what finished, and the shell's status
      const char* abbrev = sigabbrev_np(sig);
      run.interrupted = fmt::format("SIG{}", abbrev ? abbrev : "?");
      code = 128 + sig;
    }
    // Results in sweep order, whatever order the workers finished them in.
    std::vector<std::size_t> idx(run.tests.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return order[a] < order[b]; });
    std::vector<TestResult> sorted;
    for (std::size_t i : idx) sorted.push_back(std::move(run.tests[i]));
    run.tests = std::move(sorted);
    run.exit_code = code;
    run.complete = run.interrupted.empty();
    run.finished_at = now_iso8601();
    run.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (auto* r : reporters) r->run_finished(run);
    trace_line({{"side", "session"}, {"cmd", "reported"}});
    return code;
  };
  auto fatal = [&](const std::string& message) {
    fmt::print(stderr, "error: {}\n", message);
    return finish(2);
  };

  // 1. Plan: the ops, their libraries (each probed in a worker), references and baselines.
  const ExecutorFactory make_executor = run_executors(o, executors);
  const ExecutorFactory make_prober = probers(o, make_executor);
  auto planned = plan_session(o, make_executor);
  if (!planned) return fatal(planned.error().message);
  const std::vector<OpPlan>& plans = planned->ops;
  for (const auto& u : planned->unusable) {
    run.ops.push_back(report_of(u));
    for (auto* rep : reporters) rep->op_planned(run.ops.back());
  }
  std::vector<std::pair<std::string, std::string>> impl_order;
  for (const auto& p : plans) {
    run.ops.push_back(report_of(p));
    for (auto* rep : reporters) rep->op_planned(run.ops.back());
    for (const auto& i : p.impls) impl_order.emplace_back(p.folder.name, i.name);
  }

  // 2. The sweep: every test; its identity, shared by its shards; this shard's part.
  const auto all_tests = enumerate_tests(plans, o.repeats, o.performance, o.timing);
  run.provenance = describe_provenance(o.root, plans, runtime_plugins());
  // A copy of each library by its hash, for compare --confirm (library_store.hpp): a few
  // milliseconds, once per content.
  if (auto kept = keep_libraries(o.root, run.provenance); !kept)
    for (auto* rep : reporters) rep->warning(fmt::format("no copy of the libraries was kept (compare --confirm cannot re-time this run): {}", kept.error().message));
  run.sweep_id = sweep_identity(plans, all_tests, run.options, run.provenance, o.run_id);
  const auto tests = shard_tests(all_tests, o.shard_index, o.shard_count);
  if (o.resume && o.resume->sweep_id != run.sweep_id)
    return fatal(fmt::format("--resume {}: that run is another sweep (sweep id {}, this one {}): the root, the selection, the options "
                             "or the seed differ",
                             o.resume->where, o.resume->sweep_id, run.sweep_id));
  for (auto* rep : reporters) rep->sweep_planned(run, tests.size());
  phase_done("plan_s");
  if (interrupted()) return finish(1);

  // 3. Devices: what each device kind in use offers, asked of a worker once (the host never
  // touches a GPU), while the first jobs' workers make their contexts beside it; then the
  // workers that will serve them.
  std::map<std::string, DeviceKind> device_kinds = {{"cpu", cpu_device_kind()}};
  SweepContext ctx{plans, o, device_kinds, o.log_dir, {}};
  for (const auto& p : plans)
    for (const auto& lib : p.folder.libraries) ctx.libraries.push_back(lib.string());
  // A device's peaks are measured on a quiet device: where the cache knows none of this kind's,
  // the probe will measure them, and nothing starts beside it.
  const nlohmann::json known_peaks = o.performance ? read_device_peaks() : nlohmann::json::object();
  auto peaks_known = [&](const std::string& kind) {
    if (!o.performance) return true;
    for (const auto& [key, entry] : known_peaks.items())
      if (key.find("|" + kind + "|") != std::string::npos) return true;
    return false;
  };
  WorkerStock stock;  // abandoned, what no slot took, when the run ends
  if (o.isolate) {
    stock_first_workers(stock, ctx, tests, make_executor, peaks_known);
    ctx.stock = &stock;
  }
  auto executor = make_prober();
  for (const auto& t : tests) {
    const std::string& kind = plans[t.op].impls[t.impl].device;
    if (kind.empty() || device_kinds.count(kind)) continue;
    executor->recycle();
    // The probe cannot write the peaks' cache from behind its walls: the host gives it what the
    // cache knows and keeps what it measured (device_peak.hpp).
    const nlohmann::json probe = {{"cmd", "devices"}, {"kind", kind}, {"measure_peak", o.performance}, {"known_peaks", known_peaks}};
    ExecOutcome out = executor->execute(probe, 120.0);
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
    if (out.status == ExecOutcome::Status::ok && o.performance) remember_device_peaks(d);
    run.devices.push_back(d);
    device_kinds[kind] = device_kind_from_json(d);
    device_kinds[kind].name = kind;  // the kind asked for, whatever the reply calls itself
    for (auto* rep : reporters) rep->device_described(device_kinds[kind]);
  }
  executor.reset();
  auto slots = worker_slots(o, device_kinds);
  if (!slots) return fatal(slots.error().message);
  // The stock serves a kind's first device: where it has several, the costliest jobs go first
  // to any of them, and a missing device has none to serve. Ended now, before any test.
  for (const auto& [kind, d] : device_kinds)
    if (kind != "cpu" && (!d.available || d.devices.size() != 1)) stock.retire_kind(kind);
  phase_done("devices_s");

  // 4. What cannot run here is SKIPPED now, with the reason (an implementation whose device is
  // missing is told once); the rest becomes jobs.
  std::size_t done = 0;
  run.phases["tests"] = nlohmann::json::object();  // the tests' phases, summed (results.hpp)
  auto report = [&](TestResult r, std::size_t place) {
    ++done;
    auto& summed = run.phases["tests"];
    for (const auto& [phase, s] : r.phases.seconds) summed[phase] = summed.value(phase, 0.0) + s;
    for (auto* rep : reporters) rep->test_finished(r, done, tests.size());
    run.tests.push_back(std::move(r));
    order.push_back(place);
  };
  std::vector<TestSpec> runnable;
  std::set<std::pair<int, int>> told;
  for (const auto& t : tests) {
    const auto& p = plans[t.op];
    if (o.resume) {  // finished in the run being resumed: its result stands
      auto it = o.resume->finished.find({p.impls[t.impl].name, p.cases[t.case_pos].id, t.repeat});
      if (it != o.resume->finished.end()) {
        report(it->second, t.order);
        continue;
      }
    }
    const std::string& device = p.impls[t.impl].device;
    const DeviceKind* kind = device.empty() ? nullptr : &device_kinds.at(device);
    const std::string why = skip_reason(p.impls[t.impl], p.manifest, p.cases[t.case_pos], kind);
    if (why.empty()) {
      runnable.push_back(t);
      continue;
    }
    const bool whole_impl = !kind || !kind->available || !p.impls[t.impl].unavailable.empty();
    if (whole_impl && told.insert({t.op, t.impl}).second)
      for (auto* rep : reporters) rep->impl_skipped(p.impls[t.impl].name, device, why);
    TestResult r = test_identity(ctx, t, 0);
    r.outcome.verdict = Verdict::skipped;
    r.outcome.message = why;
    report(std::move(r), t.order);
  }
  JobOptions job_options;
  job_options.performance = o.performance;
  for (const auto& s : *slots)
    for (const auto& k : s.kinds) ++job_options.workers_per_kind[k];
  Scheduler scheduler(make_jobs(runnable, plans, job_options));

  // 5. Run: each worker takes jobs for its devices; their events reach the reporters here.
  EventQueue events;
  HostLoadMonitor host_load;  // what else the machine does while the tests run
  host_load.start();
  {
    g_running_scheduler = &scheduler;  // a signal now cancels it
    if (interrupted()) scheduler.cancel();
    WorkerPool pool(*slots, scheduler, ctx, make_executor, events);
    while (auto e = events.pop()) {
      switch (e->kind) {
        case Event::Kind::started:
          for (auto* rep : reporters) rep->test_started(e->result);
          break;
        case Event::Kind::finished:
          report(std::move(e->result), e->order);
          break;
        case Event::Kind::warning:
          for (auto* rep : reporters) rep->warning(e->text);
          break;
        case Event::Kind::measured:
          run.measured_time += e->seconds;
          break;
      }
    }
    pool.join();
    stock.abandon_all();
    g_running_scheduler = nullptr;
    for (const auto& w : pool.stats())
      run.workers.push_back({{"name", w.name}, {"jobs", w.jobs}, {"tests", w.tests}, {"worker_starts", w.worker_starts}, {"started_ahead", w.started_ahead}, {"busy_s", w.busy_s}});
  }
  phase_done("run_s");
  run.host_load = host_load.stop();  // the console says when the host was busy (its summary)

  // 6. Scores and the verdict.
  run.scores = compute_scores(run.tests, impl_order, o.perf_p);
  const bool all_passed = std::all_of(run.tests.begin(), run.tests.end(),
                                      [](const TestResult& r) { return r.outcome.verdict == Verdict::pass || r.outcome.verdict == Verdict::skipped; });
  const int status = finish(planned->any_unusable() ? 2 : all_passed ? 0 : 1);
  const bool all_skipped = !run.tests.empty() && std::all_of(run.tests.begin(), run.tests.end(),
                                                                   [](const TestResult& r) { return r.outcome.verdict == Verdict::skipped; });
  if (status == 0 && all_skipped && o.skip_exit_code) return *o.skip_exit_code;
  return status;
}

}  // namespace bb
