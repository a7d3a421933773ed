// One run of the suite: discover, plan, test every (op, implementation, case), score, report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <map>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include "measure/measurement.hpp"
#include "plan/plan.hpp"
#include "report/reporter.hpp"
#include "run/session_options.hpp"
#include "run/workers/executor.hpp"
#include "scores.hpp"

namespace bb {

// Where the session's requests run: a fresh executor each call. Empty: worker processes, or the
// host with --no-isolate (executor.hpp); the unit tests give a fake that needs no process.
using ExecutorFactory = std::function<std::unique_ptr<Executor>()>;

// The sweep the options select, planned (plan_sweep) with each library probed as the run probes
// it: in a worker behind a prober's walls, several at once (or in the host with --no-isolate).
// The run and --list plan through it.
// `python_found`: called too once the sweep is known to import Python files (PyTorch imports
// take seconds), before they are surveyed.
Expected<SweepPlan> plan_session(const SessionOptions& options, ExecutorFactory executors = {}, std::function<void()> python_found = {});

// `run` comes with its command, host, options and root; the session fills in the rest as the
// run goes and hands it to the reporters. Returns the exit status: 0 every test passed (SKIPPED allowed), 1 some test did not pass,
// 2 the root, a manifest or a plugin could not be used.
int run_session(const SessionOptions& options, RunRecord run, const std::vector<Reporter*>& reporters, ExecutorFactory executors = {});

}  // namespace bb
