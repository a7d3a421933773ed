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

#include "scores.hpp"
#include "executor.hpp"
#include "measure/measurement.hpp"
#include "plan.hpp"
#include "report/reporter.hpp"

namespace bb {

struct SessionOptions {
  std::filesystem::path root;
  std::filesystem::path log_dir;   // where the run's files go (hidden from every worker); empty: --no-log
  std::vector<std::string> ops;    // --ops
  std::vector<std::string> impls;  // --impls
  std::vector<std::string> cases;  // --cases: ids or globs of case ids (plan.hpp, filter_cases)
  std::vector<int> input_ids;      // --input-id: case indices, 0-based, in each op's order
  std::string python;              // --python: the interpreter whose packages .py implementations import
  bool isolate = true;             // worker processes; --no-isolate runs in the host
  std::string worker_binary;       // the host binary, run as `<binary> __worker`
  WorkerLimits worker_limits{default_worker_memory_limit()};  // --worker-memory-limit
  double test_timeout = 60.0;      // seconds per test before TIMEOUT (timing budget added)
  bool performance = true;         // time performance cases
  bool check_determinism = false;
  std::optional<uint64_t> seed;
  // --random-cases N: N more cases per sweep, drawn from its ranges by the seed; --variants: the
  // value variants of the correctness cases (cases.hpp).
  CaseExpansion expansion = default_expansion();
  TimingOptions timing;
  std::vector<double> perf_p{1.0};
  ScoreRule score_rule = ScoreRule::standard;  // --strict: refusals are failures (scores.hpp)
  // Devices: which ordinals of each GPU kind get a worker pool. Empty: device 0 only; "all":
  // every device found; otherwise the listed ordinals.
  std::vector<int> device_ordinals;
  bool all_devices = false;
  int cpu_workers = 0;   // -j: workers for CPU tests (and per device with --correctness-only); 0: default_cpu_workers
  int shard_index = 0, shard_count = 1;  // --shard i/n (0-based index here)
  int repeats = 1;       // --repeat N
  // Names the run for its sweep id: shards of one run share it (default: the Slurm array's
  // job id, else BACKENDBENCH_RUN_ID; empty: the sweep's tests and options alone).
  std::string run_id;
  std::optional<int> skip_exit_code;
  // --fail-on-skip PERCENT: exit 1 where more than this share (percent) of the run's tests was
  // SKIPPED (0: any), so that a CI job sees coverage that went missing.
  std::optional<double> fail_on_skip;
  // --resume DIR: the tests that run finished, by (implementation, case, repeat); they are
  // reported as they were and not run again. Its sweep id must be this sweep's.
  struct Resume {
    std::string where;  // DIR
    std::string sweep_id;
    std::map<std::tuple<std::string, std::string, int>, TestResult> finished;
  };
  std::optional<Resume> resume;  // every selected test SKIPPED: exit with this (CTest's SKIP_RETURN_CODE)
};

// The CPU workers of a run: -j where given. Else, when nothing is timed, half the CPUs this
// process may use (at most 32; 1 on a host of fewer than 8). When timing, 1: CPU pairings side
// by side share the memory bus and the last-level cache, and on the H200 host (32 cores) eight
// of them moved the CPU medians by 10% (geomean; 0.73x to 1.8x) and the speedups by 3.7% against
// one at a time (docs/PERFORMANCE.md, "Many GPUs"): -j N trades that for speed where asked.
int cpu_worker_count(const SessionOptions& o);

nlohmann::json session_options_json(const SessionOptions& options);

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
