// Whether a "warm" request got its worker ready: the reply is the worker's, which a plugin's
// process writes; any shape of it is an answer, never an exception.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "run/workers/worker_starts.hpp"

namespace {

bb::ExecOutcome ok(nlohmann::json reply) {
  bb::ExecOutcome out;
  out.status = bb::ExecOutcome::Status::ok;
  out.reply = std::move(reply);
  return out;
}

// A worker whose warm-up takes `delay_ms` and that says when it ended.
class SlowStart final : public bb::Executor {
 public:
  SlowStart(int delay_ms, std::atomic<int>& ended) : delay_ms_(delay_ms), ended_(ended) {}
  ~SlowStart() override { ++ended_; }
  bb::ExecOutcome execute(const nlohmann::json&, double, int) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    return ok(nlohmann::json::object());
  }
  bool launch() override { return true; }

 private:
  int delay_ms_;
  std::atomic<int>& ended_;
};

}  // namespace

TEST(WorkerStarts, AWarmReplyIsReadWhateverItsShape) {
  EXPECT_TRUE(bb::warmed(ok(nlohmann::json::object())));
  EXPECT_TRUE(bb::warmed(ok({{"error", ""}})));
  EXPECT_FALSE(bb::warmed(ok({{"error", "no cuda device"}})));
  bb::ExecOutcome crashed = ok(nlohmann::json::object());
  crashed.status = bb::ExecOutcome::Status::crashed;
  EXPECT_FALSE(bb::warmed(crashed));
  // Of another type than a string: not ready, and no exception.
  for (const auto& reply : {nlohmann::json{{"error", 7}}, nlohmann::json{{"error", nullptr}}, nlohmann::json{{"error", {1, 2}}}}) {
    bool ready = true;
    EXPECT_NO_THROW(ready = bb::warmed(ok(reply))) << reply.dump();
    EXPECT_FALSE(ready) << reply.dump();
  }
}

// A job that needs several new workers (its implementation's, the reference's, the baseline's)
// starts them side by side, also when each replaces a worker of the job before: retiring the
// old reference does not wait for the new implementation's warm-up (on four GPUs a slot's three
// contexts were made one after another, 3.9 s before its first test, against 1.5 s side by side).
TEST(WorkerStarts, RetiringOneWorkerDoesNotWaitForAnothersStart) {
  using clock = std::chrono::steady_clock;
  std::atomic<int> ended{0};
  bb::WorkerStarts starts(true);
  auto impl = std::make_unique<SlowStart>(300, ended);
  auto old_reference = std::make_unique<SlowStart>(0, ended);
  const auto t0 = clock::now();
  starts.warm(*impl, {{"cmd", "warm"}}, 10);
  starts.retire(std::move(old_reference));
  auto reference = std::make_unique<SlowStart>(300, ended);
  starts.warm(*reference, {{"cmd", "warm"}}, 10);
  EXPECT_TRUE(starts.wait_started().empty());
  const double waited = std::chrono::duration<double>(clock::now() - t0).count();
  EXPECT_LT(waited, 0.5) << "the two warm-ups ran one after the other";
  EXPECT_GE(waited, 0.3);
  // A worker retired while its own warm-up is under way ends after that warm-up has its reply.
  auto baseline = std::make_unique<SlowStart>(200, ended);
  starts.warm(*baseline, {{"cmd", "warm"}}, 10, true);
  const auto t1 = clock::now();
  starts.retire(std::move(baseline));
  EXPECT_GE(std::chrono::duration<double>(clock::now() - t1).count(), 0.15);
  starts.settle();
  EXPECT_EQ(ended, 2);
}
