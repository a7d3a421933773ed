// The sweep's work: enumeration, sharding, jobs and the scheduler's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>
#include <thread>

#include "plan/jobs.hpp"
#include "run/scheduler.hpp"

namespace {

std::vector<bb::TestSpec> tests_with_costs(const std::vector<double>& costs) {
  std::vector<bb::TestSpec> t;
  for (std::size_t i = 0; i < costs.size(); ++i) t.push_back({0, static_cast<int>(i % 3), static_cast<int>(i), 0, costs[i], i});
  return t;
}

// Two ops: the first with a CPU and a CUDA implementation, two correctness and two performance cases.
std::vector<bb::OpPlan> plans() {
  bb::OpPlan p;
  p.folder.name = "op";
  for (int c = 0; c < 4; ++c) {
    bb::ConcreteCase cs;
    cs.index = c;
    cs.id = "case" + std::to_string(c);
    cs.kind = c < 2 ? bb::CaseKind::correctness : bb::CaseKind::performance;
    p.cases.push_back(cs);
  }
  p.impls = {{"op__cpu", "cpu", "cpu.so", {}, "cpu"}, {"op__gpu", "gpu", "gpu.so", {}, "cuda"}};
  p.baselines = {{{}, "op_reference", {}, "cpu"}};
  return {p};
}

}  // namespace

TEST(Sweep, ShardsAreDisjointCompleteBalancedAndDeterministic) {
  std::vector<double> costs;
  for (int i = 0; i < 200; ++i) costs.push_back(i % 10 == 0 ? 50.0 : 1.0 + i % 3);
  const auto tests = tests_with_costs(costs);
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  std::set<std::size_t> seen;
  for (int s = 0; s < 3; ++s) {
    const auto part = bb::shard_tests(tests, s, 3);
    const auto again = bb::shard_tests(tests, s, 3);
    ASSERT_EQ(part.size(), again.size());
    for (std::size_t k = 0; k < part.size(); ++k) EXPECT_EQ(part[k].order, again[k].order);
    double load = 0;
    for (const auto& t : part) {
      EXPECT_TRUE(seen.insert(t.order).second) << "test " << t.order << " in two shards";
      load += t.cost;
    }
    EXPECT_TRUE(std::is_sorted(part.begin(), part.end(), [](const auto& a, const auto& b) { return a.order < b.order; }));
    EXPECT_NEAR(load, total / 3, 50.0) << "shard " << s << " is off balance by more than one large test";
  }
  EXPECT_EQ(seen.size(), tests.size());
  EXPECT_EQ(bb::shard_tests(tests, 0, 1).size(), tests.size());
}

TEST(Sweep, JobsCarryEveryTestOnceAndTimedCasesCostTheirPair) {
  const auto p = plans();
  std::vector<bb::TestSpec> runnable;
  for (int impl = 0; impl < 2; ++impl)
    for (int c = 0; c < 4; ++c) runnable.push_back({0, impl, c, 0, c < 2 ? 1.0 : 10.0, runnable.size()});
  bb::JobOptions one;
  one.workers_per_kind = {{"cpu", 1}, {"cuda", 1}};
  auto jobs = bb::make_jobs(runnable, p, one);
  // One worker per kind: one job per implementation, nothing to wait for (the baseline is
  // timed beside each timed case, in the implementation's own worker).
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].device, "cpu");
  EXPECT_EQ(jobs[0].tests.size(), 4u);
  EXPECT_EQ(jobs[1].device, "cuda");
  for (const auto& j : jobs) EXPECT_TRUE(j.after.empty());
  // Several CUDA workers: the CUDA implementation is cut into pieces; every test once.
  bb::JobOptions many = one;
  many.workers_per_kind["cuda"] = 4;
  jobs = bb::make_jobs(runnable, p, many);
  std::multiset<std::size_t> carried;
  std::size_t cuda_jobs = 0;
  for (const auto& j : jobs) {
    cuda_jobs += j.device == "cuda";
    for (const auto& t : j.tests) carried.insert(t.order);
  }
  EXPECT_GT(cuda_jobs, 1u);
  EXPECT_EQ(carried.size(), runnable.size());
  EXPECT_EQ(std::set<std::size_t>(carried.begin(), carried.end()).size(), runnable.size());

  // A timed case costs about three of its measurement budgets (both sides' blocks, their flushes
  // and checked calls), in units of a small correctness test (5 ms): about a hundred of them.
  bb::TimingOptions timing;
  const auto timed = bb::enumerate_tests(p, 1, true, timing);
  const auto untimed = bb::enumerate_tests(p, 1, false, timing);
  ASSERT_EQ(timed.size(), untimed.size());
  EXPECT_EQ(timed[0].cost, untimed[0].cost);  // a correctness case
  // The default budget: warm-up 0.01 s + 0.2 s, three times, in units of 0.005 s.
  EXPECT_NEAR(timed[3].cost - untimed[3].cost, 3 * (0.01 + 0.2) / 0.005, 1e-9);
  EXPECT_GT(timed[3].cost, 100 * untimed[0].cost);
}

TEST(Sweep, SchedulerHonoursDevicesDependenciesAndAffinity) {
  std::vector<bb::Job> jobs(4);
  jobs[0].device = "cuda";
  jobs[1].device = "cuda", jobs[1].impl = 0, jobs[1].after = {0};
  jobs[2].device = "cpu", jobs[2].impl = 1;
  jobs[3].device = "cuda", jobs[3].impl = 0;
  bb::Scheduler s(jobs);
  EXPECT_EQ(s.take({"cuda"}), 0u);
  // Job 1 waits for job 0: the next CUDA job is 3.
  EXPECT_EQ(s.take({"cuda"}), 3u);
  EXPECT_EQ(s.take({"cpu"}), 2u);
  EXPECT_EQ(s.take({"cpu"}), std::nullopt);  // no CPU work left
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    EXPECT_EQ(s.take({"cuda"}), 1u);  // blocks until job 0 is done
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  s.done(0);
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(s.take({"cuda"}), std::nullopt);

  // Affinity: a worker that just ran implementation 5 gets its next piece before an older job.
  std::vector<bb::Job> two(3);
  two[0].device = two[1].device = two[2].device = "cpu";
  two[0].impl = 5, two[1].impl = 6, two[2].impl = 5;
  bb::Scheduler a(two);
  EXPECT_EQ(a.take({"cpu"}), 0u);
  EXPECT_EQ(a.take({"cpu"}, 0u), 2u);
  EXPECT_EQ(a.take({"cpu"}, 2u), 1u);
}

// The next implementation's worker is started once the current one has no job left waiting:
// the scheduler names the job it is likely to give next, and takes nothing.
TEST(Sweep, SchedulerNamesTheNextImplementationOnceTheCurrentOneHasNoJobLeft) {
  std::vector<bb::Job> jobs(5);
  for (auto& j : jobs) j.device = "cpu";
  jobs[0].impl = 5, jobs[1].impl = 5, jobs[2].impl = 6, jobs[3].impl = 7;
  jobs[4].impl = 8, jobs[4].device = "cuda";
  bb::Scheduler s(jobs);
  ASSERT_EQ(s.take({"cpu"}), 0u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 0), std::nullopt) << "job 1 is still implementation 5's";
  ASSERT_EQ(s.take({"cpu"}, 0u), 1u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 1), 2u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 1), 2u) << "naming it takes nothing";
  ASSERT_EQ(s.take({"cpu"}, 1u), 2u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 2), 3u);
  ASSERT_EQ(s.take({"cpu"}, 2u), 3u);
  EXPECT_EQ(s.next_implementation({"cpu"}, 3), std::nullopt) << "the CUDA job is another worker's";
  EXPECT_EQ(s.next_implementation({"cuda"}, 3), 4u);
  s.cancel();
  EXPECT_EQ(s.next_implementation({"cuda"}, 3), std::nullopt);
}

// A case with `devices:` is a test of the implementations on those devices only.
TEST(Sweep, ACaseForSomeDevicesIsATestOfTheirImplementationsOnly) {
  auto p = plans();
  p[0].manifest.devices = {"cpu", "cuda"};
  p[0].impls[1].info.devices = {"cuda"};
  p[0].cases[3].devices = {"cuda"};  // a performance case sized for a GPU
  for (auto& i : p[0].impls) i.device = bb::device_for(i.info, p[0].manifest);  // as planning decides it
  const auto tests = bb::enumerate_tests(p, 1, true, bb::TimingOptions{});
  ASSERT_EQ(tests.size(), 7u);  // 4 cases for the CUDA implementation, 3 for the CPU one
  int cpu = 0, cuda = 0;
  for (const auto& t : tests) {
    (t.impl == 0 ? cpu : cuda)++;
    if (t.impl == 0) EXPECT_NE(t.case_pos, 3) << "the CPU implementation got the GPU-only case";
  }
  EXPECT_EQ(cpu, 3);
  EXPECT_EQ(cuda, 4);
}
