// What a run was asked to do: the command line's options for one session (cli.cpp fills them;
// the session, the planner, the workers' walls and a crash's rerun line read them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measurement.hpp"
#include "plan/cases.hpp"
#include "results.hpp"
#include "run/workers/executor.hpp"
#include "scores.hpp"

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
  // --mode fwd|bwd|fwd,bwd: the passes every op is checked and timed in (plan/mode.hpp); unset:
  // what each op's manifest declares.
  std::optional<std::vector<Mode>> modes;
  bool check_backwards = false;  // --check-backwards (plan/check_backwards.hpp)
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
  std::optional<int> skip_exit_code;  // every selected test SKIPPED: exit with this (CTest's SKIP_RETURN_CODE)
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
  std::optional<Resume> resume;
};

// The CPU workers of a run: -j where given. Else, when nothing is timed, half the CPUs this
// process may use (at most 32; 1 on a host of fewer than 8). When timing, a quarter of the
// physical cores (at most 8; 1 below 8 cores), each pairing on a physical core of its own
// (cpu_pin.hpp): side by side they share the memory bus and the last-level cache
// (docs/PERFORMANCE.md, "Many GPUs"); -j N trades more of that for speed where asked.
int cpu_worker_count(const SessionOptions& o);

nlohmann::json session_options_json(const SessionOptions& options);

}  // namespace bb
