// Device contexts made one at a time, a job's own workers first (context_gate.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "context_gate.hpp"

namespace {
using Need = bb::ContextGate::Need;
using namespace std::chrono_literals;
}  // namespace

TEST(ContextGate, OneContextAtATimeAndAJobsOwnWorkersFirst) {
  bb::ContextGate gate(1);
  std::atomic<int> inside{0}, most{0};
  std::mutex m;
  std::vector<std::string> order;
  auto make = [&](const std::string& name, Need need) {
    const bb::ContextGate::Pass pass(gate, need, 10);
    const int now = ++inside;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    {
      const std::lock_guard lock(m);
      order.push_back(name);
    }
    std::this_thread::sleep_for(30ms);
    --inside;
  };
  std::vector<std::thread> threads;
  {
    // The first holds the gate while a spare, then a job's worker, queue behind it.
    const bb::ContextGate::Pass first(gate, Need::now, 10);
    threads.emplace_back(make, "spare", Need::ahead);
    std::this_thread::sleep_for(20ms);
    threads.emplace_back(make, "job", Need::now);
    std::this_thread::sleep_for(20ms);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(most, 1);
  EXPECT_EQ(order, (std::vector<std::string>{"job", "spare"}));
}

// A holder that never leaves (a device that hangs making its context) holds the others only
// as long as the most they wait; they then go ahead, and say how long they waited.
TEST(ContextGate, AContextThatHangsHoldsTheOthersNoLongerThanTheirMostWait) {
  bb::ContextGate gate(1);
  const bb::ContextGate::Pass stuck(gate, Need::now, 10);
  const auto t0 = std::chrono::steady_clock::now();
  const bb::ContextGate::Pass next(gate, Need::now, 0.2);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.19);
  EXPECT_LT(waited, 2.0);
  EXPECT_NEAR(next.waited_s(), waited, 0.05);
}
