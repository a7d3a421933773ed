// What a worker slot does with one job: a TestRequest per test, driven through its workers
// (test_driver.hpp: the implementation's, the reference's, the baseline's); the result given
// its identity and percent of the device's peak; no time kept for an incorrect implementation.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "device_kind.hpp"
#include "executor.hpp"
#include "jobs.hpp"
#include "plan.hpp"
#include "results.hpp"
#include "session_options.hpp"
#include "test_driver.hpp"
#include "worker_starts.hpp"
#include "worker_stock.hpp"

namespace bb {

// What the run knows while it runs (read-only).
struct SweepContext {
  const std::vector<OpPlan>& plans;
  const SessionOptions& options;
  const std::map<std::string, DeviceKind>& device_kinds;  // the kinds in use, by name (cpu always)
  std::filesystem::path log_dir;         // hidden from every worker
  std::vector<std::string> libraries;    // every plugin library of the run: each worker sees its own only
  WorkerStock* stock = nullptr;          // workers started with the plan (worker_stock.hpp), if any
};

// The workers of one slot: the implementation's, the reference's and the baseline's, each
// restarted (behind new walls) when what it serves changes.
struct WorkerSet {
  std::unique_ptr<Executor> impl, reference, baseline;
  std::string reference_key, baseline_key;  // what the reference and baseline workers serve now
  // Holds no plugin: compares timed device blocks on the device (device_check.hpp); started on
  // first use and kept for the whole run. Null: every block's buffers come back to the host.
  std::unique_ptr<Executor> checker;
  bool checker_warm = false;  // its device context made (start_job_workers)
  // TestWorkers::quiet for every test of the slot.
  std::function<void()> quiet;
  // A fresh executor of the run's kind, and where workers start and end side by side
  // (worker_starts.hpp); without them, workers are recycled in place, one after the other.
  std::function<std::unique_ptr<Executor>()> make;
  WorkerStarts* starts = nullptr;
  int cuda_ordinal = -1;  // a CUDA slot's device: its workers see it alone (walls_for)
};

// The walls of a worker that may see `library` (and no other of `libraries`); "" for a worker
// that probes.
WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::string& library);
// ... that may see every one of `own_libraries` (none: a worker that probes).
WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::vector<std::string>& own_libraries);
// ... and, with `cuda_ordinal` (a worker of a CUDA slot), that device alone (WorkerWalls::
// device_uuid) where the run knows its UUID and the device is no MIG instance.
// The first path a worker must read (its binary, the root, the source folders the root links to:
// `linked`, the runtime plugins, Python's packages) that a user of its own could not, "" where
// none: where one is, workers run as uid 0 without capabilities instead (walls_for), and
// /proc/self/mem is theirs to write.
std::string unreachable_for_workers(const SessionOptions& o, const std::vector<std::string>& linked);
// The folders outside `root` that its ops' manifests, data/ folders and the given libraries link
// to (a CMake build links them to the op's source folder): a worker reads them as it reads the
// root, read-only.
std::vector<std::string> linked_source_dirs(const std::filesystem::path& root, const std::vector<std::string>& libraries,
                                            const std::vector<std::string>& own_libraries);
WorkerWalls walls_for(const SweepContext& ctx, const std::string& library, int cuda_ordinal = -1);
WorkerWalls walls_for(const SweepContext& ctx, const std::vector<std::string>& own_libraries, int cuda_ordinal = -1);

// Where a job's events go (the session's event queue).
struct JobEvents {
  std::function<void(const TestResult&)> started;   // op, impl, case_id, device filled
  std::function<void(TestResult, std::size_t order)> finished;
  std::function<void(const std::string&)> warning;
  std::function<void(double seconds)> measured;     // time inside timed regions (both sides of a pair)
};

// The result's identity, as reported, before it runs.
TestResult test_identity(const SweepContext& ctx, const TestSpec& t, int ordinal);

// Why an implementation does not support a case by what it declares (its dtypes, its
// preconditions), or "" if it does.
std::string unsupported_reason(const PluginInfo& info, const ConcreteCase& c);

// Why an implementation cannot run a case on `device` ("" if it can), and whether that is its
// own refusal (the devices, dtypes or preconditions it declares: Outcome::refused) rather than
// the machine's lack.
struct SkipReason {
  std::string why;
  bool refused = false;
};
// `device_kind`: the description of impl.device (null when it runs on none of the op's devices).
SkipReason skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const DeviceKind* device_kind);

// Before `job`'s first test: the workers it needs that are not running for it yet (the
// reference's and the baseline's of its op and device, the checker's for device tests, and the
// implementation's when `impl_fresh`), started side by side and warmed (their device contexts
// made); returns once all have started.
void start_job_workers(const Job& job, int ordinal, WorkerSet& workers, SweepContext& ctx, bool impl_fresh);

// A worker's "warm" request: its device context on `ordinal` of `device`, and where `library` is
// a .py file, its interpreter with PyTorch and Triton imported (plugin_library.hpp).
nlohmann::json warm_request(const std::string& device, int ordinal, const std::string& library = "");

// The key of the worker of a slot that serves `t` on `device`: workers of one key are one
// worker. Every op's reference library (native code, the run's judge, never code under test)
// shares one: a slot moving to another op starts no process and no device context for its
// reference (a context cost 0.2 s of the driver's time, serialised across a host's GPUs:
// docs/PERFORMANCE.md). A .py reference (its worker is forked for its file) and an
// implementation, as reference or baseline, keep one of their own (library, symbol, device).
std::string side_worker_key(const Target& t, const std::string& device);
// Whether `key` is the shared reference worker's (its walls let it see every reference library).
bool shares_references(const std::string& key);
// The key of the worker that serves `p`'s reference for tests on `device`.
std::string reference_worker_key(const OpPlan& p, const std::string& device);

// Starts, into `stock`, the workers the first jobs of each device kind will ask for on its
// first device (worker_stock.hpp): the first kStockedImpls implementations of `tests` on that
// kind (not those whose jobs are deferred: Job::deferred) and the first one's reference where
// it runs on a device too. Only for kinds whose
// device node exists and `ready_for(kind)` (whose peaks need no measuring); `make` gives a
// fresh isolated executor.
inline constexpr std::size_t kStockedImpls = 3;
void stock_first_workers(WorkerStock& stock, const SweepContext& ctx, const std::vector<TestSpec>& tests,
                         const std::function<std::unique_ptr<Executor>()>& make, const std::function<bool(const std::string&)>& ready_for);

// Runs `job` with `workers` on device `ordinal` of its kind.
void run_job(const Job& job, int ordinal, WorkerSet& workers, SweepContext& ctx, const JobEvents& events);

}  // namespace bb
