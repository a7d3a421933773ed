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

// The strict rule (--strict, for grading): an implementation's own refusal is a failure, and a
// performance case that did not pass counts as no speedup; the machine's SKIPPED still count for
// nothing.
TEST(Scores, TheStrictRuleCountsARefusalAsAFailureAndAFailedCaseAsNoSpeedup) {
  auto perf = [](const char* impl, bb::Verdict v, std::optional<double> speedup = {}, bool refused = false) {
    bb::TestResult r = result(impl, v, speedup);
    r.id.kind = "performance";
    r.outcome.refused = refused;
    return r;
  };
  std::vector<bb::TestResult> rs = {
      result("fast", bb::Verdict::pass), perf("fast", bb::Verdict::pass, 2.0), perf("fast", bb::Verdict::pass, 8.0),
      // Declares it cannot take one of the cases (its dtypes): SKIPPED by its own word.
      result("picky", bb::Verdict::pass), perf("picky", bb::Verdict::pass, 4.0), perf("picky", bb::Verdict::skipped, {}, true),
      // No device on this machine: not its doing.
      perf("nodevice", bb::Verdict::skipped), perf("nodevice", bb::Verdict::skipped),
      perf("broken", bb::Verdict::pass, 100.0), perf("broken", bb::Verdict::fail),
  };
  const std::vector<std::pair<std::string, std::string>> order = {{"op", "fast"}, {"op", "picky"}, {"op", "nodevice"}, {"op", "broken"}};

  auto standard = bb::compute_scores(rs, order, {1.0});
  EXPECT_EQ(standard.rule, bb::ScoreRule::standard);
  EXPECT_TRUE(standard.impls[1].fully_correct);
  EXPECT_EQ(standard.impls[1].refused, 1);
  EXPECT_EQ(standard.impls[1].skipped, 1);
  EXPECT_NEAR(*standard.impls[1].speedup, 4.0, 1e-12);
  EXPECT_FALSE(standard.impls[3].speedup);
  EXPECT_NEAR(*standard.geomean_speedup, 4.0, 1e-12);  // fast and picky
  EXPECT_EQ(standard.failed, 1);
  EXPECT_EQ(standard.skipped, 3);
  EXPECT_NEAR(standard.correctness_rate, 6.0 / 7.0, 1e-12);
  EXPECT_NEAR(standard.perf_at[0].second, 2.0 / 3.0, 1e-12);

  auto strict = bb::compute_scores(rs, order, {1.0}, bb::ScoreRule::strict);
  EXPECT_EQ(strict.rule, bb::ScoreRule::strict);
  EXPECT_FALSE(strict.impls[1].fully_correct);
  EXPECT_EQ(strict.impls[1].refused, 1);
  EXPECT_EQ(strict.impls[1].failed, 1);
  EXPECT_EQ(strict.impls[1].skipped, 0);
  EXPECT_NEAR(*strict.impls[1].speedup, 2.0, 1e-12);   // 4x and a refused case as 1.0
  EXPECT_NEAR(*strict.impls[3].speedup, 10.0, 1e-12);  // 100x and a failed case as 1.0
  EXPECT_FALSE(strict.impls[1].speedup_low);           // no interval for one that did not pass every case
  EXPECT_NEAR(*strict.impls[0].speedup, 4.0, 1e-12);   // a fully correct one scores as under the standard rule
  EXPECT_FALSE(strict.impls[2].ran());                  // the machine's skips count for nothing
  EXPECT_NEAR(*strict.geomean_speedup, std::cbrt(4.0 * 2.0 * 10.0), 1e-12);
  EXPECT_NEAR(*strict.ops[0].geomean_speedup, std::cbrt(4.0 * 2.0 * 10.0), 1e-12);
  EXPECT_EQ(strict.failed, 2);
  EXPECT_EQ(strict.skipped, 2);
  EXPECT_NEAR(strict.correctness_rate, 6.0 / 8.0, 1e-12);
  EXPECT_NEAR(strict.perf_at[0].second, 1.0 / 3.0, 1e-12);  // only fast

  // The exit status follows the rule too.
  EXPECT_TRUE(bb::passes(rs[5], bb::ScoreRule::standard));
  EXPECT_FALSE(bb::passes(rs[5], bb::ScoreRule::strict));
  EXPECT_TRUE(bb::passes(rs[6], bb::ScoreRule::strict));
}

// Timed in both passes (plan/mode.hpp), an implementation's speedup is of all its cases, and of
// each mode apart; the op's each mode's over those timed in it. Timed in one mode: no split.
TEST(Scores, ASpeedupOfEachModeWhereMoreThanOneWasTimed) {
  auto in = [](bb::TestResult r, const char* mode) {
    r.id.mode = mode;
    return r;
  };
  std::vector<bb::TestResult> rs = {
      in(result("both", bb::Verdict::pass, 2.0), "fwd"), in(result("both", bb::Verdict::pass, 8.0), "fwd"),
      in(result("both", bb::Verdict::pass, 0.5), "bwd"), in(result("fwd_only", bb::Verdict::pass, 1.0), "fwd"),
      in(result("fwd_only", bb::Verdict::skipped), "bwd"),
  };
  auto s = bb::compute_scores(rs, {{"op", "both"}, {"op", "fwd_only"}}, {1.0});
  ASSERT_EQ(s.impls.size(), 2u);
  EXPECT_NEAR(*s.impls[0].speedup, std::cbrt(2.0 * 8.0 * 0.5), 1e-12);
  ASSERT_EQ(s.impls[0].speedup_by_mode.size(), 2u);
  EXPECT_EQ(s.impls[0].speedup_by_mode[0].first, "fwd");
  EXPECT_NEAR(s.impls[0].speedup_by_mode[0].second, 4.0, 1e-12);
  EXPECT_EQ(s.impls[0].speedup_by_mode[1].first, "bwd");
  EXPECT_NEAR(s.impls[0].speedup_by_mode[1].second, 0.5, 1e-12);
  EXPECT_TRUE(s.impls[1].speedup_by_mode.empty()) << "timed in one mode: its speedup is that mode's";
  ASSERT_EQ(s.ops[0].speedup_by_mode.size(), 2u);
  EXPECT_NEAR(s.ops[0].speedup_by_mode[0].second, std::sqrt(4.0 * 1.0), 1e-12) << "fwd: both's and fwd_only's";
  EXPECT_NEAR(s.ops[0].speedup_by_mode[1].second, 0.5, 1e-12) << "bwd: both's alone";
}
