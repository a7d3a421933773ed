// The next implementation's worker, started while the current one's last job runs: its process
// behind its own walls and, on a device, its context made (a "warm" request), so that the switch
// to the next implementation finds it ready instead of paying the start (25 ms behind the walls
// on the VM, 0.15-0.19 s with a CUDA context on the H100: docs/PERFORMANCE.md, "What a worker's
// start costs"). None of it runs beside a measurement: a test settles the spare before its first
// timed block (TestWorkers::quiet). No plugin code runs in it before its turn: its library is
// loaded by its first test's prepare, after the switch, so an implementation cannot start ahead
// to disturb the one being timed.
#pragma once

#include <future>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "run/workers/executor.hpp"

namespace bb {

class SpareWorker {
 public:
  SpareWorker() = default;
  ~SpareWorker();
  SpareWorker(const SpareWorker&) = delete;
  SpareWorker& operator=(const SpareWorker&) = delete;

  // Starts `worker` (its walls already set) for `target` (op, implementation): its process
  // from the calling thread, which must outlive it (Executor::launch), its first request,
  // `warm`, on another thread. Any spare held before is retired.
  void start(std::unique_ptr<Executor> worker, std::pair<int, int> target, nlohmann::json warm, double timeout_seconds);
  bool held() const { return worker_ != nullptr; }
  // Waits until the start has finished (whatever its outcome: a worker that failed to warm up
  // says why at its first real request).
  void settle();
  // The worker, settled, if it was started for `target` and its warm-up succeeded; else null,
  // and the spare is retired (a device a previous worker still held, out of memory: the caller
  // starts a fresh one once that worker has ended)
  // (another worker slot took that implementation, or the jobs came in another order).
  std::unique_ptr<Executor> take(std::pair<int, int> target);
  // The worker, settled, whatever its warm-up's outcome (null if none): for the caller to end.
  std::unique_ptr<Executor> release();

 private:
  void retire();
  std::unique_ptr<Executor> worker_;
  std::pair<int, int> target_{-1, -1};
  std::future<bool> started_;
  bool warm_ok_ = false;
};

}  // namespace bb
