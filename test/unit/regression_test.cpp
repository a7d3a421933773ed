// What `backendbench compare` decides (regression.hpp) and what `backendbench merge` builds
// (merge.hpp), on runs made by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/merge.hpp"
#include "compare/regression.hpp"
#include "run_record.hpp"

namespace {

bb::TestResult test(const std::string& impl, const std::string& case_id, bb::Verdict v = bb::Verdict::pass, int repeat = 0) {
  bb::TestResult t;
  t.id.op = "scale";
  t.id.impl = impl;
  t.id.case_id = case_id;
  t.id.kind = case_id.rfind("performance", 0) == 0 ? "performance" : "correctness";
  t.outcome.verdict = v;
  t.id.repeat = repeat;
  if (v != bb::Verdict::pass) t.outcome.message = "max abs error 0.5 at [3]";
  return t;
}

// A timed test: median `m` seconds, relative noise `noise`, quartiles `spread` either side.
bb::TestResult timed(const std::string& impl, const std::string& case_id, double m, double noise, double spread, int repeat = 0) {
  auto t = test(impl, case_id, bb::Verdict::pass, repeat);
  bb::Timing timing;
  timing.mode = "cold";
  timing.stats.samples = 200;
  timing.stats.median = timing.stats.mean = m;
  timing.stats.q1 = m * (1 - spread);
  timing.stats.q3 = m * (1 + spread);
  timing.stats.rel_stdev = noise;
  timing.stats.stdev = noise * m;
  t.performance.timing = timing;
  return t;
}

bb::RunRecord run_of(std::vector<bb::TestResult> tests) {
  bb::RunRecord r;
  r.sweep_id = "sweep-a";
  bb::OpReport op;
  op.op = "scale";
  for (const auto& t : tests)
    if (std::find(op.impls.begin(), op.impls.end(), t.id.impl) == op.impls.end()) op.impls.push_back(t.id.impl);
  r.ops.push_back(op);
  r.tests = std::move(tests);
  bb::rescore(r);
  return r;
}

const bb::Change& change_of(const bb::RunComparison& c, const std::string& key) {
  for (const auto& ch : c.changes)
    if (ch.key == key) return ch;
  static bb::Change none;
  ADD_FAILURE() << "no change for " << key;
  return none;
}

bb::TimingSummary summary(double median, double noise, double q1, double q3) {
  bb::TimingSummary t;
  t.median = median;
  t.rel_stdev = noise;
  t.q1 = q1;
  t.q3 = q3;
  t.samples = 100;
  return t;
}

}  // namespace

// ---- The performance decision alone.

TEST(CompareTiming, ClearSlowdownIsSlower) {
  const auto d = bb::compare_timing(summary(1.0, 0.01, 0.99, 1.01), summary(1.2, 0.01, 1.19, 1.21), 5);
  EXPECT_EQ(d.change, bb::TimingChange::slower);
  EXPECT_NEAR(d.relative, 0.2, 1e-12);
}

TEST(CompareTiming, BelowThresholdIsSame) {
  // 4% slower, quiet, no overlap at all: still below the 5% threshold.
  const auto d = bb::compare_timing(summary(1.0, 0.001, 0.999, 1.001), summary(1.04, 0.001, 1.039, 1.041), 5);
  EXPECT_EQ(d.change, bb::TimingChange::same);
  // The same with a 3% threshold is a slowdown.
  EXPECT_EQ(bb::compare_timing(summary(1.0, 0.001, 0.999, 1.001), summary(1.04, 0.001, 1.039, 1.041), 3).change,
            bb::TimingChange::slower);
}

TEST(CompareTiming, NoiseLargerThanTheSlowdownIsInconclusive) {
  // 20% slower, but NEW's noise is 30%: not a regression (nvbench would take the smaller, 1%).
  const auto d = bb::compare_timing(summary(1.0, 0.01, 0.99, 1.01), summary(1.2, 0.30, 1.15, 1.25), 5);
  EXPECT_EQ(d.change, bb::TimingChange::inconclusive);
  EXPECT_NE(d.why.find("noise"), std::string::npos) << d.why;
}

TEST(CompareTiming, OverlappingDistributionsAreInconclusive) {
  // 20% slower, quiet by stdev, but NEW's q1 (1.05) sits below BASE's q3 (1.10).
  const auto d = bb::compare_timing(summary(1.0, 0.05, 0.90, 1.10), summary(1.2, 0.05, 1.05, 1.30), 5);
  EXPECT_EQ(d.change, bb::TimingChange::inconclusive);
  EXPECT_NE(d.why.find("overlap"), std::string::npos) << d.why;
}

TEST(CompareTiming, ImprovementIsSymmetric) {
  EXPECT_EQ(bb::compare_timing(summary(1.0, 0.01, 0.99, 1.01), summary(0.5, 0.01, 0.49, 0.51), 5).change, bb::TimingChange::faster);
  EXPECT_EQ(bb::compare_timing(summary(1.0, 0.01, 0.90, 1.01), summary(0.8, 0.01, 0.79, 0.95), 5).change,
            bb::TimingChange::inconclusive);  // NEW's q3 above BASE's q1
}

TEST(CompareTiming, UnknownNoiseOrQuartilesAreInconclusive) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(bb::compare_timing(summary(1.0, nan, 0.99, 1.01), summary(2.0, 0.01, 1.99, 2.01), 5).change, bb::TimingChange::inconclusive);
  EXPECT_EQ(bb::compare_timing(summary(1.0, 0.01, 0, 0), summary(2.0, 0.01, 1.99, 2.01), 5).change, bb::TimingChange::inconclusive);
  auto cold = summary(1.0, 0.01, 0.99, 1.01), hot = summary(2.0, 0.01, 1.99, 2.01);
  cold.mode = "cold";
  hot.mode = "hot";
  const auto d = bb::compare_timing(cold, hot, 5);
  EXPECT_EQ(d.change, bb::TimingChange::inconclusive);
  EXPECT_NE(d.why.find("cold"), std::string::npos);
}

// ---- Repeats folded into one test.

TEST(SummarizeTests, RepeatsPassOnlyIfEveryRepeatPassed) {
  const auto s = bb::summarize_tests({test("scale__a", "correctness/x", bb::Verdict::pass, 0),
                                      test("scale__a", "correctness/x", bb::Verdict::fail, 1),
                                      test("scale__a", "correctness/x", bb::Verdict::pass, 2), test("scale__b", "correctness/x")});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].key(), "scale/scale__a/correctness/x");
  EXPECT_EQ(s[0].verdict, bb::Verdict::fail);
  EXPECT_EQ(s[0].repeats, 3);
  EXPECT_EQ(s[0].passed, 2);
  EXPECT_NE(s[0].message.find("repeat 2"), std::string::npos) << s[0].message;
  EXPECT_EQ(s[1].verdict, bb::Verdict::pass);
}

TEST(SummarizeTests, RepeatTimingsAreTheMedianOfMediansWithTheirDriftAsNoise) {
  const auto s = bb::summarize_tests({timed("scale__a", "performance/x", 1.0, 0.01, 0.01, 0), timed("scale__a", "performance/x", 1.3, 0.01, 0.01, 1),
                                      timed("scale__a", "performance/x", 1.1, 0.02, 0.01, 2)});
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].timing);
  EXPECT_DOUBLE_EQ(s[0].timing->median, 1.1);
  EXPECT_EQ(s[0].timing->repeats, 3);
  EXPECT_EQ(s[0].timing->samples, 600u);
  EXPECT_DOUBLE_EQ(s[0].timing->q1, 0.99);  // the lowest q1
  EXPECT_DOUBLE_EQ(s[0].timing->q3, 1.313);  // the highest q3
  // The medians 1.0, 1.3, 1.1 drift by ~13.9% (stdev / mean): more than any repeat's own 1-2%.
  EXPECT_NEAR(s[0].timing->rel_stdev, 0.1527525 / 1.1333333, 1e-6);
}

// ---- Whole runs.

TEST(CompareRuns, PassToFailIsACorrectnessRegression) {
  const auto base = run_of({test("scale__a", "correctness/x"), test("scale__a", "correctness/y")});
  const auto next = run_of({test("scale__a", "correctness/x", bb::Verdict::fail), test("scale__a", "correctness/y")});
  const auto c = bb::compare_runs(base, next, {});
  EXPECT_TRUE(c.has_regression());
  EXPECT_EQ(c.regressions(), 1);
  const auto& ch = change_of(c, "scale/scale__a/correctness/x");
  EXPECT_EQ(ch.kind, bb::ChangeKind::correctness_regression);
  EXPECT_EQ(c.changes.front().key, "scale/scale__a/correctness/x") << "regressions come first";
  EXPECT_EQ(change_of(c, "scale/scale__a/correctness/y").kind, bb::ChangeKind::unchanged);
}

TEST(CompareRuns, PassToSkippedIsLostCoverageUnlessAsked) {
  const auto base = run_of({test("scale__cuda", "correctness/x")});
  const auto next = run_of({test("scale__cuda", "correctness/x", bb::Verdict::skipped)});
  const auto c = bb::compare_runs(base, next, {});
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.count(bb::ChangeKind::lost_coverage), 1);
  bb::CompareOptions strict;
  strict.skip_is_regression = true;
  EXPECT_TRUE(bb::compare_runs(base, next, strict).has_regression());
}

TEST(CompareRuns, ClearSlowdownIsAPerformanceRegression) {
  const auto base = run_of({timed("scale__a", "performance/big", 1e-3, 0.02, 0.01), timed("scale__b", "performance/big", 1e-3, 0.02, 0.01)});
  const auto next = run_of({timed("scale__a", "performance/big", 2e-3, 0.02, 0.01), timed("scale__b", "performance/big", 1.01e-3, 0.02, 0.01)});
  const auto c = bb::compare_runs(base, next, {});
  EXPECT_EQ(c.regressions(), 1);
  const auto& ch = change_of(c, "scale/scale__a/performance/big");
  EXPECT_EQ(ch.kind, bb::ChangeKind::slower);
  ASSERT_TRUE(ch.relative);
  EXPECT_NEAR(*ch.relative, 1.0, 1e-12);
  // Per implementation: scale__a is half as fast, scale__b about the same.
  ASSERT_EQ(c.impls.size(), 2u);
  EXPECT_NEAR(c.impls[0].speedup, 0.5, 1e-12);
  EXPECT_NEAR(c.impls[1].speedup, 1 / 1.01, 1e-12);
  const std::string text = bb::comparison_text(c, base, next, {});
  EXPECT_NE(text.find("SLOWER"), std::string::npos) << text;
  EXPECT_NE(text.find("+100.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("REGRESSION: 1 regression"), std::string::npos) << text;
  const std::string md = bb::comparison_markdown(c, base, next, {});
  EXPECT_NE(md.find("| **SLOWER** | `scale/scale__a/performance/big` |"), std::string::npos) << md;
}

TEST(CompareRuns, NoisySlowdownIsListedButNoRegression) {
  const auto base = run_of({timed("scale__a", "performance/big", 1e-3, 0.40, 0.3)});
  const auto next = run_of({timed("scale__a", "performance/big", 1.3e-3, 0.40, 0.3)});
  const auto c = bb::compare_runs(base, next, {});
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.count(bb::ChangeKind::inconclusive), 1);
}

TEST(CompareRuns, NewRemovedImprovedFixedAndTimedOnceAreListedNeverFailing) {
  const auto base = run_of({timed("scale__a", "performance/big", 2e-3, 0.01, 0.01), test("scale__a", "correctness/gone"),
                            test("scale__a", "correctness/broken", bb::Verdict::fail), timed("scale__a", "performance/once", 1e-3, 0.01, 0.01),
                            test("scale__a", "correctness/still", bb::Verdict::crash)});
  const auto next = run_of({timed("scale__a", "performance/big", 1e-3, 0.01, 0.01), test("scale__a", "correctness/added"),
                            test("scale__a", "correctness/broken"), test("scale__a", "performance/once"),
                            test("scale__a", "correctness/still", bb::Verdict::fail)});
  const auto c = bb::compare_runs(base, next, {});
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(change_of(c, "scale/scale__a/performance/big").kind, bb::ChangeKind::faster);
  EXPECT_EQ(change_of(c, "scale/scale__a/correctness/gone").kind, bb::ChangeKind::removed_test);
  EXPECT_EQ(change_of(c, "scale/scale__a/correctness/added").kind, bb::ChangeKind::new_test);
  EXPECT_EQ(change_of(c, "scale/scale__a/correctness/broken").kind, bb::ChangeKind::fixed);
  EXPECT_EQ(change_of(c, "scale/scale__a/performance/once").kind, bb::ChangeKind::timed_once);
  EXPECT_EQ(change_of(c, "scale/scale__a/correctness/still").kind, bb::ChangeKind::still_failing);
  const std::string text = bb::comparison_text(c, base, next, {});
  for (const char* word : {"FASTER", "REMOVED", "correctness/added", "FIXED", "TIMED ONCE", "OK: no regression"})
    EXPECT_NE(text.find(word), std::string::npos) << word << "\n" << text;
  // --max-rows: the rest is counted.
  bb::CompareText few;
  few.max_rows = 2;
  EXPECT_NE(bb::comparison_text(c, base, next, few).find("... and 3 more"), std::string::npos);
}

TEST(CompareRuns, RepeatsOfOneTestAreComparedAsOne) {
  // BASE ran once; NEW ran three repeats, one of which failed: a regression, reported once.
  const auto base = run_of({test("scale__a", "correctness/x")});
  const auto next = run_of({test("scale__a", "correctness/x", bb::Verdict::pass, 0), test("scale__a", "correctness/x", bb::Verdict::fail, 1),
                            test("scale__a", "correctness/x", bb::Verdict::pass, 2)});
  const auto c = bb::compare_runs(base, next, {});
  ASSERT_EQ(c.changes.size(), 1u);
  EXPECT_EQ(c.changes[0].kind, bb::ChangeKind::correctness_regression);
}

// ---- merge_shards.

namespace {

bb::ShardRun shard(int index, int count, std::vector<bb::TestResult> tests, const std::string& sweep = "sweep-a") {
  auto r = run_of(std::move(tests));
  r.sweep_id = sweep;
  r.shard = {index, count};
  r.host = {{"hostname", "node" + std::to_string(index)}};
  r.started_at = "2024-05-01T02:0" + std::to_string(index) + ":00Z";
  r.finished_at = "2024-05-01T03:0" + std::to_string(index) + ":00Z";
  r.wall_time = 10;
  return {"shard-" + std::to_string(index), r};
}

}  // namespace

TEST(MergeShards, JoinsShardsInSweepOrder) {
  // The sweep: scale__a, scale__b, scale__c x {c1, c2, c3}, dealt out over two shards; each
  // shard ran its part in sweep order, and together they say c1 < c2 < c3.
  auto s0 = shard(0, 2, {test("scale__a", "c1"), test("scale__a", "c2"), test("scale__b", "c3", bb::Verdict::fail), test("scale__c", "c1")});
  auto s1 = shard(1, 2, {test("scale__a", "c3"), test("scale__b", "c1"), test("scale__b", "c2"), test("scale__c", "c2"), test("scale__c", "c3")});
  auto m = bb::merge_shards({s1, s0}, {});
  ASSERT_TRUE(m) << m.error().message;
  const auto& r = m->run;
  std::vector<std::string> keys;
  for (const auto& t : r.tests) keys.push_back(bb::test_key(t));
  EXPECT_EQ(keys, (std::vector<std::string>{"scale/scale__a/c1", "scale/scale__a/c2", "scale/scale__a/c3", "scale/scale__b/c1",
                                            "scale/scale__b/c2", "scale/scale__b/c3", "scale/scale__c/c1", "scale/scale__c/c2",
                                            "scale/scale__c/c3"}));
  EXPECT_EQ(r.shard.count, 1);
  ASSERT_EQ(r.merged_shards.size(), 2u);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.scores.failed, 1);
  EXPECT_EQ(r.started_at, "2024-05-01T02:00:00Z");
  EXPECT_EQ(r.finished_at, "2024-05-01T03:01:00Z");
  EXPECT_DOUBLE_EQ(r.wall_time, 20);
  EXPECT_EQ(r.host["hostname"], "node0");
  EXPECT_EQ(r.host["hosts"].size(), 2u);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].impls, (std::vector<std::string>{"scale__a", "scale__b", "scale__c"}));
  EXPECT_TRUE(r.complete);
}

TEST(MergeShards, RefusesWhatIsNotOneSweep) {
  auto s0 = shard(0, 2, {test("scale__a", "c1")});
  auto s1 = shard(1, 2, {test("scale__a", "c2")});
  auto other = shard(1, 2, {test("scale__a", "c2")}, "sweep-b");
  auto m = bb::merge_shards({s0, other}, {});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("sweep_id"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("shards of different runs"), std::string::npos) << m.error().message;

  auto dup = bb::merge_shards({s0, s0}, {});
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("shard 1/2"), std::string::npos) << dup.error().message;

  auto three = shard(1, 3, {test("scale__a", "c2")});
  auto counts = bb::merge_shards({s0, three}, {});
  ASSERT_FALSE(counts);
  EXPECT_NE(counts.error().message.find("shard.count 3"), std::string::npos) << counts.error().message;

  auto missing = bb::merge_shards({s1}, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("missing shard 1/2"), std::string::npos) << missing.error().message;
  bb::MergeOptions partial;
  partial.allow_partial = true;
  auto allowed = bb::merge_shards({s1}, partial);
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_FALSE(allowed->run.complete);
  ASSERT_EQ(allowed->warnings.size(), 1u);

  auto killed = s1;
  killed.run.complete = false;
  auto k = bb::merge_shards({s0, killed}, {});
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().message.find("complete is false"), std::string::npos) << k.error().message;
  EXPECT_TRUE(bb::merge_shards({s0, killed}, partial));

  auto overlap = s1;
  overlap.run.tests.push_back(test("scale__a", "c1"));
  auto o = bb::merge_shards({s0, overlap}, {});
  ASSERT_FALSE(o);
  EXPECT_NE(o.error().message.find("scale/scale__a/c1"), std::string::npos) << o.error().message;
}

TEST(MergeShards, APartialMergeMergesAgainWithTheLateShard) {
  bb::MergeOptions partial;
  partial.allow_partial = true;
  auto s0 = shard(0, 3, {test("scale__a", "c1")});
  auto s1 = shard(1, 3, {test("scale__a", "c2")});
  auto s2 = shard(2, 3, {test("scale__a", "c3")});
  auto first = bb::merge_shards({s0, s2}, partial);
  ASSERT_TRUE(first) << first.error().message;
  auto again = bb::merge_shards({{"merged", first->run}, s1}, {});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->run.tests.size(), 3u);
  EXPECT_EQ(again->run.merged_shards.size(), 3u);
  EXPECT_TRUE(again->run.complete);
  EXPECT_EQ(again->run.host["hosts"].size(), 3u);
  // The merged run given twice with a shard it already holds: refused.
  EXPECT_FALSE(bb::merge_shards({{"merged", first->run}, s2}, partial));
}

TEST(MergeShards, AnUnshardedRunAloneIsFine) {
  auto whole = shard(0, 1, {test("scale__a", "c1"), test("scale__a", "c2")});
  auto m = bb::merge_shards({whole}, {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->run.tests.size(), 2u);
  EXPECT_EQ(m->run.exit_code, 0);
}
