// Scores of a run: per implementation, per op and overall.
//
//   correctness rate   passed tests / tests that ran (SKIPPED excluded)
//   speedup            an implementation's geomean over its timed performance cases of each
//                      case's paired speedup (paired.hpp), with an interval combining the
//                      cases' intervals; an interval holding 1.0 is "no significant difference"
//   geomean speedup    per op and overall, over fully correct implementations only, of their
//                      point speedups, significant or not (setting the others to 1.0 would bias
//                      it); the failed ones are counted beside it, never as 1.0
//   perf@p             share of the implementations that ran (not every test SKIPPED) that are
//                      fully correct and significantly faster than p: the low end of the
//                      speedup's interval above p (its point speedup, where no interval is
//                      known) (KernelBench's fast_p, with the noise taken into account)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results.hpp"

namespace bb {

struct ImplScore {
  std::string op, impl;
  int tests = 0, passed = 0, failed = 0, skipped = 0;  // failed: any verdict but PASS / SKIPPED
  bool fully_correct = false;                         // no failure and at least one pass
  bool ran() const { return tests > skipped; }        // not every test SKIPPED
  std::optional<double> speedup;
  std::optional<double> speedup_low, speedup_high;  // its interval, when every timed case had one
  // The speedup's interval lies wholly above (or below) p; without an interval, the point does.
  bool faster_than(double p) const { return speedup && (speedup_low ? *speedup_low > p : *speedup > p); }
  bool significant() const { return !speedup_low || *speedup_low > 1.0 || *speedup_high < 1.0; }
};

struct OpScore {
  std::string op;
  int impls = 0, correct_impls = 0;  // implementations that ran, and those fully correct
  std::optional<double> geomean_speedup;
};

struct Scores {
  std::vector<ImplScore> impls;
  std::vector<OpScore> ops;
  int tests = 0, passed = 0, failed = 0, skipped = 0;
  double correctness_rate = 0.0;
  std::optional<double> geomean_speedup;
  std::vector<std::pair<double, double>> perf_at;  // (p, share)
};

std::optional<double> geomean(const std::vector<double>& values);

// `impl_order` lists every scored implementation as (op, impl), so that one whose tests all
// vanished still counts; `ps` are the perf@p thresholds.
Scores compute_scores(const std::vector<TestResult>& results, const std::vector<std::pair<std::string, std::string>>& impl_order,
                      const std::vector<double>& ps);

}  // namespace bb
