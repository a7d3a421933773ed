// The next implementation's worker started ahead (spare_worker.hpp), with a fake executor: its
// process started from the caller's thread, its first request on another, and handed over only
// to the implementation it was started for.
#include "run/workers/spare_worker.hpp"
#include "run/workers/worker_stock.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace {

struct Seen {
  std::atomic<int> launched{0}, executed{0}, recycled{0}, abandoned{0};
  std::thread::id launched_on, executed_on;
  nlohmann::json request;
};

class FakeExecutor final : public bb::Executor {
 public:
  FakeExecutor(Seen& seen, int delay_ms = 0, bool starts = true, std::string error = "")
      : seen_(seen), delay_ms_(delay_ms), starts_(starts), error_(std::move(error)) {}
  bb::ExecOutcome execute(const nlohmann::json& request, double, int) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    seen_.request = request;
    seen_.executed_on = std::this_thread::get_id();
    ++seen_.executed;
    bb::ExecOutcome out;
    out.reply = {{"error", error_}};
    return out;
  }
  bool launch() override {
    seen_.launched_on = std::this_thread::get_id();
    ++seen_.launched;
    return starts_;
  }
  void recycle() override { ++seen_.recycled; }
  void abandon() override { ++seen_.abandoned; }

 private:
  Seen& seen_;
  int delay_ms_;
  bool starts_;
  std::string error_;
};

TEST(SpareWorker, StartsOnTheCallersThreadWarmsUpOnAnotherAndIsTakenByItsImplementation) {
  Seen seen;
  bb::SpareWorker spare;
  EXPECT_FALSE(spare.held());
  EXPECT_EQ(spare.take({0, 1}), nullptr);
  spare.start(std::make_unique<FakeExecutor>(seen, 50), {0, 1}, {{"cmd", "warm"}, {"device", "cuda"}}, 10);
  EXPECT_TRUE(spare.held());
  EXPECT_EQ(seen.launched, 1);
  EXPECT_EQ(seen.launched_on, std::this_thread::get_id()) << "a worker dies with the thread that started it";
  spare.settle();  // waits the 50 ms warm-up out
  EXPECT_EQ(seen.executed, 1);
  EXPECT_NE(seen.executed_on, std::this_thread::get_id());
  EXPECT_EQ(seen.request["cmd"], "warm");
  auto taken = spare.take({0, 1});
  ASSERT_NE(taken, nullptr);
  EXPECT_FALSE(spare.held());
  EXPECT_EQ(seen.recycled, 0);
  spare.settle();  // nothing to wait for
}

// A spare that could not make its context (the device still held by the worker ending beside it:
// a plugin that took every byte) is retired, not handed over: the caller starts a fresh one.
TEST(SpareWorker, OneWhoseWarmUpFailedIsRetiredNotTaken) {
  Seen seen;
  bb::SpareWorker spare;
  spare.start(std::make_unique<FakeExecutor>(seen, 0, true, "set device 0: cuda error 2 (out of memory)"), {0, 1}, {{"cmd", "warm"}}, 10);
  EXPECT_EQ(spare.take({0, 1}), nullptr);
  EXPECT_EQ(seen.executed, 1);
  EXPECT_EQ(seen.recycled, 1);
  EXPECT_FALSE(spare.held());
}

TEST(SpareWorker, AnotherImplementationRetiresIt) {
  Seen seen;
  {
    bb::SpareWorker spare;
    spare.start(std::make_unique<FakeExecutor>(seen, 20), {0, 1}, {{"cmd", "warm"}}, 10);
    EXPECT_EQ(spare.take({0, 2}), nullptr);  // the jobs came in another order
    EXPECT_EQ(seen.executed, 1) << "settled before it was retired";
    EXPECT_EQ(seen.recycled, 1);
    EXPECT_FALSE(spare.held());
    // A second start while one is held retires the first; the destructor retires the last.
    spare.start(std::make_unique<FakeExecutor>(seen), {1, 0}, {{"cmd", "warm"}}, 10);
    spare.start(std::make_unique<FakeExecutor>(seen), {1, 1}, {{"cmd", "warm"}}, 10);
    EXPECT_EQ(seen.recycled, 2);
  }
  EXPECT_EQ(seen.recycled, 3);
  EXPECT_EQ(seen.executed, 3);
}

// Workers started with the plan (worker_stock.hpp): each handed to its key once, warmed up;
// one whose warm-up failed ended, not handed; what no slot took ended by kind (waited for) or
// abandoned at the run's end.
TEST(WorkerStock, HandsEachWorkerToItsKeyOnceWarmedUp) {
  Seen seen;
  bb::WorkerStock stock;
  stock.start(bb::stocked_impl_key(0, 1, "cuda", 0), "cuda", std::make_unique<FakeExecutor>(seen, 50), {{"cmd", "warm"}}, 10);
  EXPECT_EQ(seen.launched_on, std::this_thread::get_id()) << "a worker dies with the thread that started it";
  EXPECT_TRUE(stock.holds(bb::stocked_impl_key(0, 1, "cuda", 0)));
  EXPECT_FALSE(stock.holds(bb::stocked_impl_key(0, 1, "cuda", 1))) << "another device's slot";
  EXPECT_EQ(stock.take(bb::stocked_impl_key(0, 2, "cuda", 0)), nullptr);
  auto w = stock.take(bb::stocked_impl_key(0, 1, "cuda", 0));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(seen.executed, 1) << "taken once its warm-up is over";
  EXPECT_EQ(stock.take(bb::stocked_impl_key(0, 1, "cuda", 0)), nullptr) << "once";
  EXPECT_EQ(stock.size(), 0u);
  EXPECT_EQ(seen.recycled + seen.abandoned, 0);
}

TEST(WorkerStock, OneWhoseWarmUpFailedIsEndedNotTaken) {
  Seen seen;
  bb::WorkerStock stock;
  const auto key = bb::stocked_reference_key("ref.so|0|cuda", 0);
  stock.start(key, "cuda", std::make_unique<FakeExecutor>(seen, 0, true, "set device 0: cuda error 100 (no device)"), {{"cmd", "warm"}}, 10);
  EXPECT_EQ(stock.take(key), nullptr);
  EXPECT_EQ(seen.recycled, 1);
  Seen never;
  stock.start(key, "cuda", std::make_unique<FakeExecutor>(never, 0, false), {{"cmd", "warm"}}, 10);
  EXPECT_FALSE(stock.holds(key)) << "a worker that could not start is not stocked";
}

TEST(WorkerStock, WhatNoSlotTookIsEndedByKindOrAbandonedAtTheEnd) {
  Seen cuda, hip;
  {
    bb::WorkerStock stock;
    stock.start(bb::stocked_impl_key(0, 0, "cuda", 0), "cuda", std::make_unique<FakeExecutor>(cuda, 30), {{"cmd", "warm"}}, 10);
    stock.start(bb::stocked_impl_key(1, 0, "hip", 0), "hip", std::make_unique<FakeExecutor>(hip, 30), {{"cmd", "warm"}}, 10);
    stock.settle();
    EXPECT_EQ(cuda.executed + hip.executed, 2) << "settled: every warm-up over";
    stock.retire_kind("hip");  // the probe found no such device: ended before any test
    EXPECT_EQ(hip.recycled, 1);
    EXPECT_EQ(hip.abandoned, 0) << "waited for, not abandoned";
    EXPECT_TRUE(stock.holds(bb::stocked_impl_key(0, 0, "cuda", 0)));
    EXPECT_EQ(cuda.abandoned, 0);
  }
  EXPECT_EQ(cuda.abandoned, 1) << "the run's end";
}

}  // namespace

TEST(SpareWorker, AWorkerThatCannotStartLeavesNoSpare) {
  // Started from the helper thread instead, it would die with that thread (executor.hpp) and the
  // next implementation's first request would read as its crash.
  Seen seen;
  bb::SpareWorker spare;
  spare.start(std::make_unique<FakeExecutor>(seen, 0, false), {0, 1}, {{"cmd", "warm"}}, 10);
  EXPECT_FALSE(spare.held());
  EXPECT_EQ(seen.executed, 0);
  EXPECT_EQ(seen.recycled, 1);
  EXPECT_EQ(spare.take({0, 1}), nullptr);
}
