#include "plan/jobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace bb {

std::vector<TestSpec> enumerate_tests(const std::vector<OpPlan>& plans, int repeats, bool performance, const TimingOptions& timing) {
  // The unit is a small correctness test (about 5 ms on the H200: 2,000 of the shipped CUDA
  // sweep's took 11.3 s); bytes moved add input generation and checking (about 2 GB/s). A
  // timed case costs about three of its measurement budgets (the baseline's and the
  // implementation's alternating blocks, their cold flushes and checked calls): its 53 took
  // 32 s, median 0.59 s, about 120 units. (At one unit in ten, the pieces cut for several GPUs
  // were uneven by the timed cases they held, and the last one set the wall.)
  const double measure = std::max(0.1, std::min(timing.rule.timeout, std::max(timing.rule.min_time * 4, timing.warmup_time + 0.2)));
  constexpr double kUnitSeconds = 0.005;
  std::vector<TestSpec> tests;
  for (int o = 0; o < static_cast<int>(plans.size()); ++o) {
    const auto& p = plans[o];
    for (int i = 0; i < static_cast<int>(p.impls.size()); ++i) {
      const std::string& device = p.impls[i].device;
      for (int r = 0; r < repeats; ++r)
        for (int c = 0; c < static_cast<int>(p.cases.size()); ++c) {
          const auto& cs = p.cases[c];
          // A case for some devices only (`devices:` in the manifest) is not a test elsewhere.
          if (!cs.runs_on(device)) continue;
          TestSpec t{o, i, c, r, 1.0, tests.size()};
          t.cost += cs.bytes.value_or(0.0) / 2e9 / kUnitSeconds;
          if (performance && cs.kind == CaseKind::performance) t.cost += 3 * measure / kUnitSeconds;
          tests.push_back(t);
        }
    }
  }
  return tests;
}

std::vector<TestSpec> shard_tests(const std::vector<TestSpec>& tests, int index, int count) {
  if (count <= 1) return tests;
  std::vector<std::size_t> by_cost(tests.size());
  std::iota(by_cost.begin(), by_cost.end(), 0);
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) { return tests[a].cost > tests[b].cost; });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<int> owner(tests.size(), 0);
  for (std::size_t k : by_cost) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();  // first of the least loaded
    owner[k] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += tests[k].cost;
  }
  std::vector<TestSpec> mine;
  for (std::size_t k = 0; k < tests.size(); ++k)
    if (owner[k] == index) mine.push_back(tests[k]);
  return mine;
}

std::vector<Job> make_jobs(const std::vector<TestSpec>& runnable, const std::vector<OpPlan>& plans, const JobOptions& options) {
  auto device_of = [&](const TestSpec& t) -> const std::string& { return plans[t.op].impls[t.impl].device; };
  std::vector<Job> jobs;
  // Tests: runs of one (op, implementation, repeat), cut so that each device kind's workers
  // all get work and end together: pieces of about a sixth of a worker's share.
  std::map<std::string, double> cost_per_kind;
  for (const auto& t : runnable) cost_per_kind[device_of(t)] += t.cost;
  auto target_for = [&](const std::string& kind) {
    const auto w = options.workers_per_kind.find(kind);
    const int workers = w == options.workers_per_kind.end() ? 1 : std::max(1, w->second);
    if (workers == 1) return std::numeric_limits<double>::infinity();
    return cost_per_kind[kind] / (6.0 * workers);
  };
  std::size_t k = 0;
  while (k < runnable.size()) {
    std::size_t end = k + 1;
    while (end < runnable.size() && runnable[end].op == runnable[k].op && runnable[end].impl == runnable[k].impl &&
           runnable[end].repeat == runnable[k].repeat)
      ++end;
    const std::string& dev = device_of(runnable[k]);
    const double target = target_for(dev);
    Job j;
    auto flush = [&]() {
      if (j.tests.empty()) return;
      jobs.push_back(std::move(j));
      j = Job{};
    };
    for (std::size_t q = k; q < end; ++q) {
      if (j.tests.empty()) {
        j.op = runnable[q].op;
        j.impl = runnable[q].impl;
        j.repeat = runnable[q].repeat;
        j.device = dev;
        j.deferred = plans[j.op].impls[j.impl].imports_packages;
      }
      j.tests.push_back(runnable[q]);
      j.cost += runnable[q].cost;
      if (j.cost >= target) flush();
    }
    flush();
    k = end;
  }
  // The costliest pieces first, so that no worker is left with a large one at the end while
  // the others idle.
  const bool several = std::any_of(options.workers_per_kind.begin(), options.workers_per_kind.end(), [](const auto& w) { return w.second > 1; });
  if (several) std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.cost > b.cost; });
  return jobs;
}

}  // namespace bb
