// The sweep as work: every test (op, implementation, case, repeat) in sweep order, the part of
// it this shard runs, and the jobs that carry it to workers. A job is a run of tests of one
// implementation on one device kind, served by one worker (which times the op's baseline for
// that device beside each timed case: paired.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "measure/measurement.hpp"
#include "plan/plan.hpp"

namespace bb {

struct TestSpec {
  int op = 0;          // index into the plans
  int impl = 0;        // index into plans[op].impls
  int case_pos = 0;    // index into plans[op].cases
  int repeat = 0;
  double cost = 1.0;   // expected cost, in units of a small correctness test
  std::size_t order = 0;  // position in the whole sweep (results are reported in this order)
};

// Every test of the plans, in sweep order: op, implementation, repeat, case.
std::vector<TestSpec> enumerate_tests(const std::vector<OpPlan>& plans, int repeats, bool performance, const TimingOptions& timing);

// Shard `index` of `count` (0-based): tests balanced by expected cost (largest first, each to
// the least loaded shard; ties to the lower shard), returned in sweep order. The same tests
// give the same partition on every host.
std::vector<TestSpec> shard_tests(const std::vector<TestSpec>& tests, int index, int count);

struct Job {
  int op = 0;
  int impl = -1;          // index into plans[op].impls
  std::string device;     // the device kind it runs on: cpu, cuda, hip
  int repeat = 0;
  std::vector<TestSpec> tests;     // what to run
  std::vector<std::size_t> after;  // jobs that must finish first (none from make_jobs today)
  double cost = 0;
  // Taken only where no other job of its device kinds is left to take: an implementation whose
  // kernel library is imported meanwhile (Implementation::imports_packages).
  bool deferred = false;
};

struct JobOptions {
  bool performance = true;
  // Workers that will serve each device kind: a kind's work is cut into enough jobs to keep
  // them all busy (one job per implementation when one worker serves it).
  std::map<std::string, int> workers_per_kind;
};

// Jobs for the runnable tests of `plans` (SKIPPED ones are settled before), each on its
// implementation's device.
std::vector<Job> make_jobs(const std::vector<TestSpec>& runnable, const std::vector<OpPlan>& plans, const JobOptions& options);

}  // namespace bb
