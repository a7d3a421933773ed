// Workers started side by side, and ended off the critical path. A job may need several new
// workers at once (its implementation's, the op's reference's, the baseline's, the checker's):
// each one's process, walls and device context (a "warm" request) are made on a thread of its
// own, so the job waits for the slowest start, not for their sum (0.33 s and 0.19 s one after the
// other on the H100: docs/PERFORMANCE.md). A worker that is done (the previous implementation's,
// a reference of another op) ends on a thread of its own as well: its teardown, its device
// context's above all, costs 60-80 ms. Nothing of either runs beside a measurement: a test
// settles them before its first timed block (TestWorkers::quiet).
#pragma once

#include <future>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/workers/executor.hpp"

namespace bb {

// Whether a "warm" request got its worker ready (its reply carries no error).
bool warmed(const ExecOutcome& out);
// Sends `worker` its "warm" request and says whether it got ready; traced (trace.hpp) as `what`
// with its round trip and, when it failed, why.
bool send_warm(Executor& worker, const nlohmann::json& warm, double timeout_seconds, const char* what);

class WorkerStarts {
 public:
  // `background`: starts and ends on threads of their own (isolated workers); false: in the
  // calling thread (in-process executors share the host's state).
  explicit WorkerStarts(bool background) : background_(background) {}
  ~WorkerStarts();
  WorkerStarts(const WorkerStarts&) = delete;
  WorkerStarts& operator=(const WorkerStarts&) = delete;

  // Starts `worker`'s process now, from the calling thread (a worker dies with the thread that
  // started it: executor.hpp), and sends it `warm` from another. A worker that cannot start
  // is left alone: its first request starts it, and says what is wrong. `before_timing`: the
  // worker is first used for timing only (a baseline's), so wait_started() need not wait for
  // it: settle() does, before the first timed block.
  void warm(Executor& worker, nlohmann::json warm, double timeout_seconds, bool before_timing = false);
  // Waits until every warm request sent so far, but those for timing, has its reply; returns the
  // workers whose warm-up failed (a device still held by a worker that is ending: out of memory).
  std::vector<Executor*> wait_started();
  // The same, those for timing included.
  void wait_all_started();
  // Ends `worker`'s processes on a thread of its own (after its own warm request, if one is under
  // way, has its reply; the other workers' starts go on).
  void retire(std::unique_ptr<Executor> worker);
  // Waits for every start and every end.
  void settle();

 private:
  bool background_;
  struct Start {
    Executor* worker;
    std::future<bool> ok;
  };
  std::vector<Start> starting_, for_timing_;
  std::vector<std::future<void>> ending_;
};

}  // namespace bb
