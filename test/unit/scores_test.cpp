#include <gtest/gtest.h>

#include <cmath>

#include "scores.hpp"

namespace {
bb::TestResult result(const char* impl, bb::Verdict v, std::optional<double> speedup = {}) {
  bb::TestResult r;
  r.id.op = "op";
  r.id.impl = impl;
  r.outcome.verdict = v;
  r.performance.speedup = speedup;
  return r;
}
}  // namespace

TEST(Scores, GeomeanAndPerfAt) {
  std::vector<bb::TestResult> rs = {
      result("fast", bb::Verdict::pass), result("fast", bb::Verdict::pass, 2.0), result("fast", bb::Verdict::pass, 8.0),
      result("slow", bb::Verdict::pass, 0.5), result("slow", bb::Verdict::skipped),
      result("broken", bb::Verdict::pass, 100.0), result("broken", bb::Verdict::fail),
  };
  auto s = bb::compute_scores(rs, {{"op", "fast"}, {"op", "slow"}, {"op", "broken"}}, {0.0, 1.0});
  ASSERT_EQ(s.impls.size(), 3u);
  EXPECT_NEAR(*s.impls[0].speedup, 4.0, 1e-12);
  EXPECT_TRUE(s.impls[1].fully_correct);
  EXPECT_FALSE(s.impls[2].fully_correct);
  EXPECT_FALSE(s.impls[2].speedup.has_value());  // a failing implementation has no speedup
  EXPECT_NEAR(*s.geomean_speedup, std::sqrt(4.0 * 0.5), 1e-12);  // broken's 100x not counted
  EXPECT_EQ(s.ops[0].correct_impls, 2);
  EXPECT_EQ(s.passed, 5);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_NEAR(s.correctness_rate, 5.0 / 6.0, 1e-12);
  EXPECT_NEAR(s.perf_at[0].second, 2.0 / 3.0, 1e-12);  // fast and slow beat 0
  EXPECT_NEAR(s.perf_at[1].second, 1.0 / 3.0, 1e-12);  // only fast beats 1
}

TEST(Scores, AnImplementationThatNeverRanIsNotInPerfAt) {
  std::vector<bb::TestResult> rs = {result("cpu", bb::Verdict::pass, 2.0), result("gpu", bb::Verdict::skipped),
                                    result("gpu", bb::Verdict::skipped)};
  auto s = bb::compute_scores(rs, {{"op", "cpu"}, {"op", "gpu"}}, {1.0});
  EXPECT_FALSE(s.impls[1].ran());
  EXPECT_FALSE(s.impls[1].fully_correct);
  EXPECT_EQ(s.ops[0].impls, 1);
  EXPECT_EQ(s.perf_at[0].second, 1.0);  // 1 of the 1 that ran
}

TEST(Scores, AnImplementationWithNoResultsStillCounts) {
  auto s = bb::compute_scores({}, {{"op", "ghost"}}, {1.0});
  ASSERT_EQ(s.impls.size(), 1u);
  EXPECT_FALSE(s.impls[0].fully_correct);
  EXPECT_EQ(s.perf_at[0].second, 0.0);
  EXPECT_FALSE(bb::geomean({}).has_value());
  EXPECT_FALSE(bb::geomean({1.0, 0.0}).has_value());
}

// With paired intervals: perf@p counts an implementation only when the low end of its interval
// is above p; the geomean keeps the point speedups, significant or not.
TEST(Scores, PerfAtCountsOnlySignificantSpeedups) {
  auto paired = [](const char* impl, double s, double lo, double hi) {
    bb::TestResult r = result(impl, bb::Verdict::pass, s);
    r.performance.speedup_low = lo;
    r.performance.speedup_high = hi;
    r.performance.speedup_confidence = 0.99;
    r.performance.speedup_pairs = 16;
    return r;
  };
  std::vector<bb::TestResult> rs = {
      paired("clear", 1.5, 1.45, 1.55), paired("clear", 1.6, 1.55, 1.65),  // faster, beyond doubt
      paired("noise", 1.02, 0.90, 1.15), paired("noise", 1.03, 0.92, 1.14),  // within the noise
      result("unpaired", bb::Verdict::pass, 1.2),                            // no interval: its point
  };
  auto s = bb::compute_scores(rs, {{"op", "clear"}, {"op", "noise"}, {"op", "unpaired"}}, {1.0});
  ASSERT_EQ(s.impls.size(), 3u);
  ASSERT_TRUE(s.impls[0].speedup_low && s.impls[0].speedup_high);
  EXPECT_GT(*s.impls[0].speedup_low, 1.0);
  EXPECT_TRUE(s.impls[0].significant());
  EXPECT_LT(*s.impls[1].speedup_low, 1.0);
  EXPECT_GT(*s.impls[1].speedup_high, 1.0);
  EXPECT_FALSE(s.impls[1].significant());
  EXPECT_FALSE(s.impls[2].speedup_low.has_value());
  EXPECT_NEAR(s.perf_at[0].second, 2.0 / 3.0, 1e-12);  // clear and unpaired; not noise
  EXPECT_NEAR(*s.geomean_speedup, std::cbrt(std::sqrt(1.5 * 1.6) * std::sqrt(1.02 * 1.03) * 1.2), 1e-12);
}
