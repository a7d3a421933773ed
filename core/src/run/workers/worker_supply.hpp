// A worker slot's workers, supplied in one place: the implementation's (taken from the stock
// started with the plan, from the spare started during the previous implementation's last job,
// or started fresh), the reference's and the baseline's (each restarted behind new walls when
// what it serves changes), the checker's (started once); each started and warmed side by side
// (worker_starts.hpp), settled before a timed block (quiet), and retired off the critical path.
// Which walls each gets is worker_walls.hpp's to say.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "devices/device_runtimes.hpp"
#include "plan/jobs.hpp"
#include "plan/plan.hpp"
#include "run/judge_request.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/spare_worker.hpp"
#include "run/workers/worker_starts.hpp"
#include "run/workers/worker_stock.hpp"

namespace bb {

struct SweepContext;

// Where the reference runs for a test on `device`: there, if its info record allows it (or it
// has none and the op runs nowhere else); otherwise the first device it lists, else the CPU.
std::string reference_device_for(const ReferenceChoice& ref, const Manifest& m, const std::string& device);

// The workers beside a job's implementation's: the reference's (its key: library, symbol,
// device) and, for timed tests, the baseline's (the reference's worker itself when they are
// the same function on the same device); for tests of `mode` bwd, the baseline's backward, where
// it has one (else none: no speedup).
struct SideWorkers {
  std::string reference_device, reference_key;
  std::optional<Target> baseline;
  std::string baseline_key;  // "" when the reference's worker serves the baseline
};
SideWorkers side_workers(const OpPlan& p, const Job& job, bool timed, Mode mode = Mode::fwd);

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
// it runs on a device too. Only for kinds whose device node exists and `ready_for(kind)` (whose
// peaks need no measuring); `make` gives a fresh isolated executor.
inline constexpr std::size_t kStockedImpls = 3;
void stock_first_workers(WorkerStock& stock, const SweepContext& ctx, const std::vector<TestSpec>& tests,
                         const std::function<std::unique_ptr<Executor>()>& make, const std::function<bool(const std::string&)>& ready_for);

class SlotWorkers {
 public:
  // In place: each worker is recycled where it is when what it serves changes, one after the
  // other (in-process runs; tests that set the workers themselves). `ctx` outlives it.
  explicit SlotWorkers(const SweepContext& ctx);
  // A slot of an isolated run: fresh executors from `make`, started and ended on threads of
  // their own, the stock's (ctx.stock) and a spare's taken where they serve; `name` for traces;
  // `cuda_ordinal` >= 0: a CUDA slot's device, which its workers see alone (worker_walls.hpp).
  SlotWorkers(const SweepContext& ctx, std::string name, int ordinal, SlotDevice device, std::function<std::unique_ptr<Executor>()> make);
  ~SlotWorkers();
  SlotWorkers(const SlotWorkers&) = delete;
  SlotWorkers& operator=(const SlotWorkers&) = delete;

  // The implementation's worker for `job`, if it serves another implementation now: the
  // stock's, else the spare's, else a fresh one (the old one retired). Returns whether it
  // changed, and `fresh` whether it was started fresh (it still needs warming: start_for).
  bool switch_impl(const Job& job, bool& fresh);
  // Starts the worker of `next` (the slot's next implementation) during the current one's last
  // job, unless one is held or the stock holds it.
  void spare_for(const Job& next);
  // Before `job`'s first test: the workers it needs that are not running for it yet (the
  // reference's and the baseline's of its op and device, the checker's for device tests, the
  // implementation's when `impl_fresh`), started side by side and warmed; returns once all
  // have started. Nothing in place.
  void start_for(const Job& job, bool impl_fresh);
  // One test's workers: the reference's and the baseline's serve `side` (restarted where they
  // served something else).
  TestWorkers for_test(const OpPlan& p, const SideWorkers& side, int device_index);
  // Everything started ahead finished (before a timed block: nothing starts beside it).
  void quiet();
  // The run's last moments: every worker ended without waiting for the kernel's teardown.
  void end();

  std::size_t started_ahead() const { return started_ahead_; }

  // The workers now (tests read and set them in place).
  std::unique_ptr<Executor> impl, reference, baseline;
  std::string reference_key, baseline_key;  // what the reference and baseline workers serve now
  // Holds no plugin: compares timed device blocks on the device (device_check.hpp); started on
  // first use and kept for the whole run. Null (in place): every block's buffers come home.
  std::unique_ptr<Executor> checker;

 private:
  // The worker `slot` serves `key` from now on: the stock's for that key, else a fresh one
  // behind the walls for `library`, if it served something else. True when it changed.
  bool serve(std::unique_ptr<Executor>& slot, std::string& current, const std::string& key, const std::string& library, int ordinal);

  const SweepContext& ctx_;
  std::string name_ = "in-place";
  int ordinal_ = 0;
  SlotDevice device_;  // its one GPU, where its workers are narrowed to it (device_runtimes.hpp)
  std::function<std::unique_ptr<Executor>()> make_;  // null: in place
  std::unique_ptr<WorkerStarts> starts_;
  SpareWorker spare_;
  bool checker_warm_ = false;
  std::pair<int, int> serving_{-1, -1};  // the implementation's worker's (op, impl)
  std::size_t started_ahead_ = 0;
  bool ended_ = false;
};

}  // namespace bb
