// The scheduler alone: which job a worker gets next, when it waits, when it stops. No executor
// is involved; waits are bounded (a broken scheduler fails a test, it does not hang it).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <vector>

#include "run/scheduler.hpp"

namespace {

using namespace std::chrono_literals;

bb::Job job(const std::string& device, int op, int impl, std::vector<std::size_t> after = {}) {
  bb::Job j;
  j.device = device;
  j.op = op;
  j.impl = impl;
  j.after = std::move(after);
  return j;
}

// take() on another thread, so that a test can see it block.
std::future<std::optional<std::size_t>> take_async(bb::Scheduler& s, std::vector<std::string> kinds,
                                                   std::optional<std::size_t> previous = std::nullopt) {
  return std::async(std::launch::async, [&s, kinds, previous] { return s.take(kinds, previous); });
}

}  // namespace

TEST(Scheduler, EachKindGetsItsJobsInTheOrderTheyWereMade) {
  bb::Scheduler s({job("cpu", 0, 0), job("cuda", 0, 1), job("cpu", 1, 0), job("cuda", 1, 1), job("hip", 2, 0)});
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.take({"cuda"}), 1u);
  EXPECT_EQ(s.take({"cpu"}), 0u);
  EXPECT_EQ(s.take({"cpu"}), 2u);
  EXPECT_EQ(s.take({"cpu"}), std::nullopt) << "no CPU job is left: the CPU worker stops";
  // A worker serving two kinds takes the first left of either; never one of a kind it does not serve.
  EXPECT_EQ(s.take({"cuda", "cpu"}), 3u);
  EXPECT_EQ(s.take({"cuda", "cpu"}), std::nullopt);
  EXPECT_EQ(s.job(4).device, "hip");
  EXPECT_EQ(s.take({"hip"}), 4u);
}

TEST(Scheduler, TakenButUnfinishedJobsDoNotKeepAWorkerWaiting) {
  bb::Scheduler s({job("cpu", 0, 0)});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  // Job 0 runs on another worker: nothing is left to take, so no wait (done() never comes for this one).
  auto f = take_async(s, {"cpu"});
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(f.get(), std::nullopt);
}

TEST(Scheduler, AJobWaitsForEveryJobItDependsOn) {
  // 2 waits for 0 (a CUDA job) and 1; 3 waits for nothing.
  bb::Scheduler s({job("cuda", 0, 0), job("cpu", 0, 1), job("cpu", 0, 2, {0, 1}), job("cpu", 0, 3)});
  ASSERT_EQ(s.take({"cuda"}), 0u);
  ASSERT_EQ(s.take({"cpu"}), 1u);
  EXPECT_EQ(s.take({"cpu"}), 3u) << "job 2 is not ready: the next ready one comes first";
  s.done(1);
  s.done(3);
  // Still waiting for job 0, of another kind.
  auto f = take_async(s, {"cpu"});
  EXPECT_EQ(f.wait_for(50ms), std::future_status::timeout) << "job 2 was given before job 0 was done";
  s.done(0);
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(f.get(), 2u);
}

TEST(Scheduler, TakeBlocksUntilDoneReleasesADependentJob) {
  bb::Scheduler s({job("cpu", 0, 0), job("cpu", 0, 1, {0})});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  auto f = take_async(s, {"cpu"}, 0u);
  const bool blocked = f.wait_for(100ms) == std::future_status::timeout;
  s.done(0);  // whatever happened: the waiter is released, the test never hangs
  EXPECT_TRUE(blocked) << "take() returned while the job it could give waited for another";
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready) << "done() did not wake the waiting worker";
  EXPECT_EQ(f.get(), 1u);
  EXPECT_EQ(s.take({"cpu"}), std::nullopt);
}

TEST(Scheduler, TheSameImplementationComesFirstAfterPrevious) {
  // Jobs 0 and 3 are (op 0, impl 5); job 2 is impl 5 of another op: not the same implementation.
  bb::Scheduler s({job("cpu", 0, 5), job("cpu", 0, 6), job("cpu", 1, 5), job("cpu", 0, 5), job("cpu", 0, 6, {1})});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  EXPECT_EQ(s.take({"cpu"}, 0u), 3u) << "the worker that ran (op 0, impl 5) gets its next piece before older jobs";
  // Nothing of (op 0, impl 5) is left: the first ready job, whatever its implementation.
  EXPECT_EQ(s.take({"cpu"}, 3u), 1u);
  // Job 4 is impl 6's but waits for job 1: the ready job 2 comes first, previous or not.
  EXPECT_EQ(s.take({"cpu"}, 1u), 2u);
  s.done(1);
  EXPECT_EQ(s.take({"cpu"}, 2u), 4u);
}

TEST(Scheduler, NextImplementationNamesTheFirstWaitingJobOfAnotherImplementationAndTakesNothing) {
  bb::Scheduler s({job("cpu", 0, 0), job("cpu", 0, 0), job("cuda", 0, 2), job("cpu", 0, 1, {0}), job("cpu", 0, 3)});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 0), std::nullopt) << "job 1 of the same implementation is still waiting";
  ASSERT_EQ(s.take({"cpu"}, 0u), 1u);
  // Job 3 waits for job 0, yet it is the one named: the first waiting job, ready or not, of this
  // worker's kinds (the CUDA job is another worker's).
  EXPECT_EQ(s.next_implementation({"cpu"}, 1), 3u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 1), 3u) << "naming a job takes nothing";
  EXPECT_EQ(s.next_implementation({"cuda"}, 1), 2u);
  EXPECT_EQ(s.take({"cpu"}, 1u), 4u) << "take() gives the first ready one, which is not the one named";
}

// Several workers of one kind (a host of several GPUs): each names a different implementation
// for its spare, and then gets the one it named; a worker takes another's claim only where
// nothing else is ready, rather than wait.
TEST(Scheduler, EachWorkersSpareIsForAnImplementationNoOtherClaimedAndItGetsIt) {
  bb::Scheduler s({job("cuda", 0, 0), job("cuda", 0, 1), job("cuda", 0, 2), job("cuda", 0, 3), job("cuda", 0, 4), job("cuda", 0, 5)});
  const std::vector<std::string> cuda{"cuda"};
  ASSERT_EQ(s.take(cuda, std::nullopt, 0), 0u);
  ASSERT_EQ(s.take(cuda, std::nullopt, 1), 1u);
  EXPECT_EQ(s.next_implementation(cuda, 0, 0), 2u) << "worker 0 claims implementation 2";
  EXPECT_EQ(s.next_implementation(cuda, 1, 1), 3u) << "worker 1 passes over worker 0's claim";
  EXPECT_EQ(s.next_implementation(cuda, 0, 0), 2u) << "a worker's own claim is named again";
  ASSERT_EQ(s.take(cuda, std::nullopt, 2), 4u) << "a third worker takes what no one claimed";
  EXPECT_EQ(s.take(cuda, 1u, 1), 3u) << "worker 1 gets the implementation its spare started for";
  EXPECT_EQ(s.take(cuda, 0u, 0), 2u) << "worker 0 too";
  // Only job 5 is left and nobody claims it: any worker takes it.
  EXPECT_EQ(s.next_implementation(cuda, 4, 2), 5u);
  EXPECT_EQ(s.take(cuda, 3u, 1), 5u) << "another worker's claim is taken rather than waited for";
  EXPECT_EQ(s.take(cuda, 5u, 2), std::nullopt);
}

// Four workers of one kind start at once on jobs cut into pieces and sorted costliest first
// (the pieces of one implementation side by side): each starts on an implementation no other
// holds, keeps to its own, and only then takes a piece of another's (the tail, shared out).
// On four GPUs every worker had started a worker process for the same implementation.
TEST(Scheduler, SeveralWorkersStartOnDifferentImplementationsAndKeepToTheirOwn) {
  bb::Scheduler s({job("cuda", 0, 0), job("cuda", 0, 0), job("cuda", 0, 0), job("cuda", 0, 1), job("cuda", 0, 1),
                   job("cuda", 1, 0), job("cuda", 1, 0)});
  const std::vector<std::string> cuda{"cuda"};
  ASSERT_EQ(s.take(cuda, std::nullopt, 0), 0u);
  EXPECT_EQ(s.take(cuda, std::nullopt, 1), 3u) << "worker 1 passes over the implementation worker 0 holds";
  EXPECT_EQ(s.take(cuda, std::nullopt, 2), 5u);
  EXPECT_EQ(s.take(cuda, std::nullopt, 3), 1u) << "nothing is free: a piece of one another worker holds, rather than idle";
  EXPECT_EQ(s.take(cuda, 0u, 0), 2u) << "worker 0 keeps to its implementation";
  EXPECT_EQ(s.take(cuda, 3u, 1), 4u);
  EXPECT_EQ(s.take(cuda, 5u, 2), 6u);
  EXPECT_EQ(s.take(cuda, 1u, 3), std::nullopt);
  s.done(0);
  EXPECT_EQ(s.take(cuda, 2u, 0), std::nullopt);
}

// After an implementation, a worker goes on with another of the same op (its reference's and
// baseline's workers serve it) before the first free one of another op; its spare is named the
// same way.
TEST(Scheduler, AWorkerGoesOnWithTheSameOpWhereItCan) {
  bb::Scheduler s({job("cuda", 0, 0), job("cuda", 1, 0), job("cuda", 0, 1), job("cuda", 0, 2)});
  const std::vector<std::string> cuda{"cuda"};
  ASSERT_EQ(s.take(cuda, std::nullopt, 0), 0u);
  EXPECT_EQ(s.next_implementation(cuda, 0, 0), 2u) << "op 0's next implementation, not op 1's first";
  ASSERT_EQ(s.take(cuda, std::nullopt, 1), 1u);
  EXPECT_EQ(s.take(cuda, 1u, 1), 3u) << "worker 1 (op 1 done) takes what is free: not worker 0's claim";
  EXPECT_EQ(s.take(cuda, 0u, 0), 2u) << "worker 0 gets its claim, of its op";
}

// Without a worker's index (the default), nothing is claimed: the first ready job, as before.
TEST(Scheduler, WithoutAnIndexNothingIsClaimed) {
  bb::Scheduler s({job("cpu", 0, 0), job("cpu", 0, 1), job("cpu", 0, 2)});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 0), 1u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 0), 1u);
  EXPECT_EQ(s.take({"cpu"}), 1u);
}

TEST(Scheduler, CancelEndsEveryTakeWaitingOrToCome) {
  bb::Scheduler s({job("cpu", 0, 0), job("cpu", 0, 1, {0}), job("cuda", 0, 2)});
  ASSERT_EQ(s.take({"cpu"}), 0u);
  auto waiting = take_async(s, {"cpu"});
  const bool blocked = waiting.wait_for(50ms) == std::future_status::timeout;
  s.cancel();
  EXPECT_TRUE(blocked);
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready) << "cancel() did not wake the waiting worker";
  EXPECT_EQ(waiting.get(), std::nullopt);
  // A ready job is not given once cancelled, nor named.
  EXPECT_EQ(s.take({"cuda"}), std::nullopt);
  EXPECT_EQ(s.next_implementation({"cuda"}, 0), std::nullopt);
  s.done(0);
  EXPECT_EQ(s.take({"cpu"}), std::nullopt) << "done() after cancel() releases nothing";
}

// An implementation whose kernel library is imported meanwhile (a library interpreter:
// python_zygote.hpp) waits until no other job is left to take, even its own op's: on one GPU
// the eager implementations of four Liger-Kernel ops ran while Liger imported, instead of the
// first Liger job's worker importing it again beside them.
TEST(Scheduler, ADeferredJobIsTakenOnlyWhereNoOtherIsLeft) {
  auto deferred = [](int op, int impl) {
    auto j = job("cuda", op, impl);
    j.deferred = true;
    return j;
  };
  bb::Scheduler s({job("cuda", 0, 0), deferred(0, 1), job("cuda", 1, 0), deferred(1, 1)});
  EXPECT_EQ(s.take({"cuda"}, std::nullopt, 0), 0u);
  EXPECT_EQ(s.next_implementation({"cuda"}, 0, 0), 2u) << "the spare starts for another op's eager implementation";
  EXPECT_EQ(s.take({"cuda"}, 0u, 0), 2u) << "not its own op's deferred job";
  EXPECT_EQ(s.next_implementation({"cuda"}, 2, 0), 3u) << "only deferred jobs are left: of the current op first";
  EXPECT_EQ(s.take({"cuda"}, 2u, 0), 3u);
  EXPECT_EQ(s.take({"cuda"}, 3u, 0), 1u);
  EXPECT_EQ(s.take({"cuda"}, 1u, 0), std::nullopt);
}
