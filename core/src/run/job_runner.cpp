#include "run/job_runner.hpp"
#include "run/workers/worker_walls.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "commands/rerun_command.hpp"
#include "devices/device.hpp"
#include "devices/device_runtimes.hpp"
#include "measure/peak_shares.hpp"
#include "plugin_library.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/interrupt.hpp"
#include "run/judge.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/python_site.hpp"
#include "run/workers/sandbox.hpp"
#include "trace.hpp"

namespace bb {

namespace {

// A test of case `c` of `impl`: its pass (the case's mode) called of the implementation and of
// the reference alike.
TestRequest request_for(const SweepContext& ctx, const OpPlan& p, const ConcreteCase& c, const Implementation& impl) {
  TestRequest req = case_request(p.folder.name, c, p.manifest.dir());
  req.impl = Target{Target::Kind::kernel_impl, impl.library.string(), pass_of(c.mode)};
  req.reference = p.reference.target(c.mode);
  req.check_determinism = ctx.options.check_determinism;
  req.timing = ctx.options.timing;
  return req;
}

// The device's measured copy bandwidth, bytes per second (0 when unknown): a timing's physical floor.
double measured_bandwidth(const DeviceKind& kind, int ordinal) {
  const DeviceFacts* d = kind.device(ordinal);
  return d ? d->measured_gbps * 1e9 : 0.0;
}

}  // namespace

TestResult test_identity(const SweepContext& ctx, const TestSpec& t, int ordinal) {
  const auto& p = ctx.plans[t.op];
  const auto& c = p.cases[t.case_pos];
  TestResult r;
  r.id = case_identity(p.folder.name, c);
  r.id.impl = p.impls[t.impl].name;
  r.id.device = p.impls[t.impl].device;
  r.id.device_index = is_cpu(r.id.device) || r.id.device.empty() ? 0 : ordinal;
  r.id.repeat = t.repeat;
  return r;
}

namespace {

// What the host adds to a test's result once the judge has given its verdict, in one place:
// the memory limit a bad_alloc met, a crash's rerun line, its share of the device's peaks; and
// no time for what did not pass.
void complete_result(TestResult& out, const SweepContext& ctx, const Job& job, const ConcreteCase& c) {
  const auto& o = ctx.options;
  if (o.worker_limits.memory_bytes && out.outcome.message.find("bad_alloc") != std::string::npos)
    out.outcome.message += fmt::format(" (a worker's memory limit is {:.1f} GiB: --worker-memory-limit)", o.worker_limits.memory_bytes / 1073741824.0);
  if (out.outcome.verdict == Verdict::crash) {  // where, and the line that runs it again in the foreground
    if (!out.outcome.crash.is_object()) out.outcome.crash = nlohmann::json::object();
    out.outcome.crash["rerun"] = rerun_command(o, out.id);
  }
  if (out.outcome.verdict == Verdict::pass && out.performance.timing) {
    if (!is_cpu(job.device)) add_peak_shares(out, ctx.device_kinds.at(job.device), c.inputs.empty() ? DType::float32 : c.inputs.front().dtype);
  } else {
    out.performance = {};  // an incorrect implementation is never reported with a time
  }
}

DriverLimits limits_for(const SweepContext& ctx, const Job& job, int device_index) {
  DriverLimits limits;
  limits.call_timeout = ctx.options.test_timeout;
  limits.device_check_min_bytes = default_device_check_min_bytes();
  // The physical floor on devices only: a CPU's cold data is not all from DRAM (the
  // prefetchers, the L3 the flush leaves), and its copy bandwidth reads low on a loaded host.
  if (!is_cpu(job.device)) limits.peak_bytes_per_second = measured_bandwidth(ctx.device_kinds.at(job.device), device_index);
  return limits;
}

}  // namespace

void run_job(const Job& job, int ordinal, SlotWorkers& workers, SweepContext& ctx, const JobEvents& events) {
  const auto& p = ctx.plans[job.op];
  const auto& impl = p.impls[job.impl];
  for (const auto& t : job.tests) {
    if (interrupted()) return;  // the run is stopping: no new test
    const auto& c = p.cases[t.case_pos];
    TestRequest req = request_for(ctx, p, c, impl);
    req.id = test_identity(ctx, t, ordinal).id;
    TestResult started;
    started.id = req.id;
    events.started(started);
    req.time = ctx.options.performance && c.kind == CaseKind::performance;
    req.device = job.device;
    req.device_index = req.id.device_index;
    req.declared_supported = !impl.info.preconditions.empty();  // it runs: the preconditions hold (skip_reason)
    const SideWorkers side = side_workers(p, job, req.time, c.mode);
    req.reference_device = side.reference_device;
    req.baseline = side.baseline;
    TestWorkers w = workers.for_test(p, side, req.id.device_index);
    const auto t0 = std::chrono::steady_clock::now();
    TestResult out = run_test(req, w, limits_for(ctx, job, req.id.device_index));  // the verdict and figures, under the test's identity
    out.phases.seconds["host_s"] = std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - out.phases.duration);
    if (interrupted()) return;  // abandoned in flight (its worker was killed): not a finished test
    if (out.performance.timing) events.measured(out.performance.timing->measured_time + out.performance.timing->baseline_measured_time);
    complete_result(out, ctx, job, c);
    events.finished(std::move(out), t.order);
  }
}

}  // namespace bb
