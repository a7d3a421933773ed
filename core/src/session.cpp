#include "session.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "discovery.hpp"
#include "executor.hpp"
#include "plan.hpp"

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

// Why an implementation cannot run a case on `device`, or "" if it can.
std::string skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const std::string& device,
                        const nlohmann::json& device_kind) {
  if (device.empty())
    return fmt::format("the implementation runs on {}; the op's tests run on {}", fmt::join(impl.info.devices, ", "), fmt::join(m.devices, ", "));
  if (device != "cpu" && !device_kind.value("available", false)) return device_kind.value("reason", "device unavailable");
  if (!impl.info.dtypes.empty()) {
    for (DType t : c.dtypes())
      if (std::find(impl.info.dtypes.begin(), impl.info.dtypes.end(), dtype_name(t)) == impl.info.dtypes.end())
        return fmt::format("dtype {} is not supported by the implementation (it supports {})", dtype_name(t), fmt::join(impl.info.dtypes, ", "));
  }
  return "";
}

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

TestResult outcome_to_result(const ExecOutcome& out) {
  TestResult r;
  if (out.status == ExecOutcome::Status::ok) {
    try {
      if (out.reply.contains("error") && !out.reply.contains("verdict")) {
        r.verdict = Verdict::error;
        r.message = out.reply.value("error", "worker error");
      } else {
        r = out.reply.get<TestResult>();
      }
    } catch (const std::exception& e) {  // a reply the host cannot read is that test's error
      r = TestResult{};
      r.verdict = Verdict::error;
      r.message = std::string("unreadable worker reply: ") + e.what();
    }
  } else {
    r.verdict = out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout;
    r.message = out.detail;
  }
  return r;
}

}  // namespace

nlohmann::json session_options_json(const SessionOptions& o) {
  const auto& r = o.timing.rule;
  return {{"root", o.root.string()},
          {"ops", o.ops},
          {"impls", o.impls},
          {"isolate", o.isolate},
          {"test_timeout_s", o.test_timeout},
          {"performance", o.performance},
          {"check_determinism", o.check_determinism},
          {"seed", o.seed ? nlohmann::json(*o.seed) : nlohmann::json()},
          {"min_samples", r.min_samples},
          {"max_samples", r.max_samples},
          {"min_time_s", r.min_time},
          {"max_noise", r.max_noise},
          {"timeout_s", r.timeout},
          {"warmup_time_s", o.timing.warmup_time},
          {"timing_mode", timing_mode_name(o.timing.mode)},
          {"blocking_kernel", o.timing.blocking_kernel},
          {"throttle_threshold", o.timing.throttle_threshold},
          {"throttle_recovery_delay_s", o.timing.throttle_recovery_delay},
          {"perf_p", o.perf_p}};
}

int run_session(const SessionOptions& o, RunInfo info, const std::vector<Reporter*>& reporters) {
  const auto started = std::chrono::steady_clock::now();
  info.started_at = now_iso8601();
  for (auto* r : reporters) r->run_started(info);
  RunSummary summary;
  auto finish = [&](int code) {
    summary.exit_code = code;
    summary.finished_at = now_iso8601();
    summary.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (auto* r : reporters) r->run_finished(summary);
    return code;
  };
  auto fatal = [&](const std::string& message) {
    fmt::print(stderr, "error: {}\n", message);
    return finish(2);
  };

  auto discovered = discover_ops(o.root);
  if (!discovered) return fatal(discovered.error().message);
  auto folders = filter_ops(std::move(*discovered), o.ops);
  if (!folders) return fatal(folders.error().message);
  if (folders->empty()) return fatal(fmt::format("{}: no ops (folders holding gen_input.yaml)", o.root.string()));

  auto executor = o.isolate ? make_isolated_executor(o.worker_binary) : make_in_process_executor();
  PlanOptions plan_options;
  plan_options.seed = o.seed;
  std::vector<OpPlan> plans;
  bool unusable = false;
  for (const auto& f : *folders) {
    auto plan = plan_op(f, *executor, plan_options);
    if (!plan) {
      unusable = true;
      OpReport r;
      r.op = f.name;
      r.manifest = f.manifest.string();
      r.errors.push_back(plan.error().message);
      summary.ops.push_back(r);
      for (auto* rep : reporters) rep->op_planned(r);
      continue;
    }
    unusable = unusable || !plan->failures.empty();
    plans.push_back(std::move(*plan));
  }
  if (auto s = filter_impls(plans, o.impls); !s) return fatal(s.error().message);

  std::size_t total = 0;
  std::vector<std::pair<std::string, std::string>> impl_order;
  for (const auto& p : plans) {
    summary.ops.push_back(report_of(p));
    for (auto* rep : reporters) rep->op_planned(summary.ops.back());
    total += p.impls.size() * p.cases.size();
    for (const auto& i : p.impls) impl_order.emplace_back(p.folder.name, i.name);
  }

  auto request_for = [&](const OpPlan& p, const ConcreteCase& c, Target target) {
    TestRequest req;
    req.manifest = p.folder.manifest.string();
    req.op = p.folder.name;
    req.case_index = c.index;
    req.impl = std::move(target);
    req.reference = p.reference.target();
    req.check_determinism = o.check_determinism;
    req.seed = o.seed;
    req.timing = o.timing;
    return req;
  };
  auto timeout_for = [&](const TestRequest& req) {
    return o.test_timeout + (req.time ? 4 * o.timing.rule.timeout + o.timing.warmup_time : 0.0);
  };

  // What each device kind offers, asked of a worker once (the host never touches a GPU).
  std::map<std::string, nlohmann::json> device_kinds;
  auto device_kind = [&](const std::string& kind) -> const nlohmann::json& {
    auto it = device_kinds.find(kind);
    if (it != device_kinds.end()) return it->second;
    nlohmann::json info = {{"name", kind}, {"available", kind == "cpu"}};
    if (kind != "cpu") {
      executor->recycle();
      ExecOutcome out = executor->execute({{"cmd", "devices"}, {"kind", kind}, {"measure_peak", o.performance}}, 120.0);
      executor->recycle();
      info = out.status == ExecOutcome::Status::ok ? out.reply
                                                   : nlohmann::json{{"name", kind}, {"available", false}, {"reason", "probing the device: " + out.detail}};
      for (auto* rep : reporters) rep->device_described(info);
    }
    return device_kinds.emplace(kind, info).first->second;
  };
  // Runs a test request; a worker whose device context a sticky error destroyed is replaced.
  auto execute = [&](const TestRequest& req) {
    ExecOutcome out = executor->execute(to_json(req), timeout_for(req));
    if (out.status == ExecOutcome::Status::ok && out.reply.value("fatal", false)) executor->recycle();
    return outcome_to_result(out);
  };

  std::size_t done = 0;
  for (const auto& p : plans) {
    // Baseline medians per device, measured first so each test's speedup is known when it is
    // reported.
    std::map<std::pair<std::string, int>, double> baseline;  // (device, case) -> median
    for (const auto& b : p.baselines) {
      if (!o.performance || !device_kind(b.device).value("available", false)) continue;
      executor->recycle();
      for (const auto& c : p.cases) {
        if (c.kind != CaseKind::performance) continue;
        TestRequest req = request_for(p, c, b.target);
        req.check = false;
        req.time = true;
        req.device = b.device;
        TestResult r = execute(req);
        if (r.timing) summary.measured_time += r.timing->measured_time;
        if (r.verdict == Verdict::pass && r.timing) baseline[{b.device, c.index}] = r.timing->stats.median;
        else fmt::print(stderr, "warning: {}: baseline {} on {}: {}: {}\n", p.folder.name, b.name, c.id, verdict_name(r.verdict), r.message);
      }
    }

    for (const auto& impl : p.impls) {
      executor->recycle();  // each implementation in a fresh worker
      const std::string device = device_for(impl.info, p.manifest);
      for (const auto& c : p.cases) {
        const std::string why = skip_reason(impl, p.manifest, c, device, device.empty() ? nlohmann::json() : device_kind(device));
        TestResult r;
        if (!why.empty()) {
          r.verdict = Verdict::skipped;
          r.message = why;
        } else {
          TestRequest req = request_for(p, c, Target{Target::Kind::kernel_impl, impl.library.string()});
          req.time = o.performance && c.kind == CaseKind::performance;
          req.device = device;
          req.reference_device = reference_device_for(p.reference, p.manifest, device);
          r = execute(req);
        }
        if (r.timing) summary.measured_time += r.timing->measured_time;
        r.op = p.folder.name;
        r.impl = impl.name;
        r.case_id = c.id;
        r.kind = case_kind_name(c.kind);
        r.device = device;
        r.flops = c.flops;
        r.bytes = c.bytes;
        if (r.verdict == Verdict::pass && r.timing && r.gbps && device != "cpu") {
          const nlohmann::json devs = device_kind(device).value("devices", nlohmann::json::array());
          if (devs.is_array() && !devs.empty()) {
            const double measured = devs[0].value("measured_bandwidth", nlohmann::json::object()).value("copy_gbps", 0.0);
            const double theoretical = devs[0].value("peak_bandwidth_gbps", 0.0);
            if (measured > 0) r.peak_pct = *r.gbps / measured * 100;
            if (theoretical > 0) r.peak_pct_theoretical = *r.gbps / theoretical * 100;
          }
        }
        if (r.verdict == Verdict::pass && r.timing) {
          if (auto it = baseline.find({device, c.index}); it != baseline.end() && r.timing->stats.median > 0) {
            r.baseline_median = it->second;
            r.speedup = it->second / r.timing->stats.median;
          }
        } else {
          r.timing.reset();  // an incorrect implementation is never reported with a time
          r.tflops.reset();
          r.gbps.reset();
        }
        ++done;
        for (auto* rep : reporters) rep->test_finished(r, done, total);
        summary.results.push_back(std::move(r));
      }
    }
  }
  executor->recycle();

  summary.scores = compute_scores(summary.results, impl_order, o.perf_p);
  const bool all_passed = std::all_of(summary.results.begin(), summary.results.end(),
                                      [](const TestResult& r) { return r.verdict == Verdict::pass || r.verdict == Verdict::skipped; });
  return finish(unusable ? 2 : all_passed ? 0 : 1);
}

}  // namespace bb
