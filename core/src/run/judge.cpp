#include "run/judge.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "protocol/worker_protocol.hpp"
#include "run/judge/timing_steps.hpp"

namespace bb {

namespace {

// One test's steps in order (judge/: a room each), and what stays after it: nothing frozen
// or pinned, every prepared call ended or its worker replaced.
class Judge final : public judge::TimingSteps {
 public:
  Judge(const TestRequest& req, const TestWorkers& w, const DriverLimits& limits) : TimingSteps(req, w, limits) {}

  // A worker's reply is read as the protocol says; one of another shape (a key of another type:
  // the implementation's process can write anything) is an ERROR of this test, and every worker
  // of it is replaced, whichever sent it. Never an exception into the worker pool's thread.
  TestResult run() {
    try {
      return steps();
    } catch (const nlohmann::json::exception& e) {
      impl_.fatal = reference_.fatal = baseline_.fatal = true;
      checker_.fatal = w_.checker != nullptr;
      impl_.open = reference_.open = baseline_.open = checker_.open = false;  // no word to its workers: replaced
      return finish(Verdict::error, fmt::format("the worker's reply could not be read ({}); its process was replaced", e.what()));
    }
  }

  TestResult steps() {
    started_ = phase_start_ = Clock::now();
    if (auto failed = make_inputs()) return *failed;
    if (auto failed = prepare()) return *failed;
    if (req_.check) {
      if (auto failed = reference()) return *failed;
      if (auto failed = check()) return *failed;
      if (auto failed = determinism()) return *failed;
    }
    if (req_.time)
      if (auto failed = measure()) return *failed;
    return finish(Verdict::pass, "");
  }

  ~Judge() {
    // Nothing stays frozen or pinned, and nothing a failed test held stays in a worker.
    if (pairing_.pinned()) end_pairing();
    for (Executor* e : {w_.impl, w_.reference, w_.baseline})
      if (e) e->freeze(false);
    if (!impl_crashed_ && impl_.open) w_.impl->execute(request_json(EndRequest{"impl"}), 10);
    if (reference_.open && !reference_.fatal) w_.reference->execute(request_json(EndRequest{"reference"}), 10);
    if (baseline_.open && w_.baseline && !baseline_.fatal) w_.baseline->execute(request_json(EndRequest{"baseline"}), 10);
    if (checker_.open && !checker_.fatal) w_.checker->execute(request_json(UnwatchRequest{}), 10);
    if (checker_.fatal) w_.checker->recycle();
    if (impl_.fatal) w_.impl->recycle();
    if (reference_.fatal) w_.reference->recycle();
    if (baseline_.fatal && w_.baseline) w_.baseline->recycle();
  }
};

}  // namespace

TestResult run_test(const TestRequest& req, const TestWorkers& workers, const DriverLimits& limits) {
  return Judge(req, workers, limits).run();
}

TestResult run_test_in_process(const TestRequest& req) {
  auto ex = make_in_process_executor();
  TestWorkers w{ex.get(), ex.get(), ex.get(), nullptr, {}};
  return run_test(req, w, DriverLimits{});
}

}  // namespace bb
