#include <gtest/gtest.h>

#include <cmath>

#include "cpu_timer.hpp"
#include "stats.hpp"

TEST(Stats, SummaryOfKnownSamples) {
  auto s = bb::summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.iqr, 2);
  EXPECT_NEAR(s.stdev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.rel_stdev, std::sqrt(2.5) / 3, 1e-12);
}

TEST(Stats, QuantilesInterpolateLikeNumpy) {
  std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(bb::quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(bb::quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(bb::summarize({7}).median, 7);
  EXPECT_EQ(bb::summarize({}).samples, 0u);
}

TEST(StopRule, ConvergesOnlyAfterMinimumsAndLowNoise) {
  bb::StopRule rule;
  rule.min_samples = 5;
  rule.min_time = 0.5;
  rule.max_noise = 0.01;
  rule.timeout = 100;
  bb::StopState s(rule);
  for (int i = 0; i < 4; ++i) s.add(1.0);
  EXPECT_EQ(s.reason(0.0), bb::StopReason::running);  // too few samples
  s.add(1.0);
  EXPECT_EQ(s.reason(0.0), bb::StopReason::converged);

  bb::StopState noisy(rule);
  for (int i = 0; i < 50; ++i) noisy.add(i % 2 ? 1.0 : 2.0);  // ~33% relative stdev
  EXPECT_EQ(noisy.reason(1.0), bb::StopReason::running);
  EXPECT_EQ(noisy.reason(100.0), bb::StopReason::timeout);  // the budget ends it

  rule.min_time = 10;
  bb::StopState short_samples(rule);
  for (int i = 0; i < 20; ++i) short_samples.add(0.1);  // 2 s measured < min_time
  EXPECT_EQ(short_samples.reason(2.0), bb::StopReason::running);
}

TEST(StopRule, MaxSamplesCapsTheRun) {
  bb::StopRule rule;
  rule.min_samples = 1;
  rule.max_samples = 10;
  rule.max_noise = 1e-9;
  bb::StopState s(rule);
  for (int i = 0; i < 10; ++i) s.add(i + 1.0);
  EXPECT_EQ(s.reason(0.0), bb::StopReason::max_samples);
}

TEST(CpuTimer, BatchesShortCallsAndStopsByRule) {
  // A call with no work: the timer must batch it (one call is far below min_sample_time) and
  // stop on one of the rule's reasons. Nothing here asserts a duration.
  bb::TimingOptions o;
  o.rule.min_samples = 5;
  o.rule.max_samples = 50;
  o.rule.min_time = 0;
  o.rule.timeout = 1.0;
  o.warmup_time = 0.001;
  o.min_sample_time = 1e-4;
  int calls = 0;
  auto m = bb::measure_cpu([&] { return ++calls, 0; }, o);
  ASSERT_TRUE(m.ok());
  EXPECT_GT(m->batch, 1u);
  EXPECT_GE(m->stats.samples, 5u);
  EXPECT_LE(m->stats.samples, 50u);
  EXPECT_NE(m->stop, bb::StopReason::running);
  EXPECT_EQ(static_cast<size_t>(calls), m->warmup_calls + m->stats.samples * m->batch);
}

TEST(CpuTimer, AFailingCallStopsTheMeasurement) {
  bb::TimingOptions o;
  int calls = 0;
  auto m = bb::measure_cpu([&] { return ++calls == 3 ? 7 : 0; }, o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("returned 7"), std::string::npos);
}

TEST(Sampling, StopsWhenTheRuleIsMetAndPropagatesErrors) {
  bb::StopRule rule;
  rule.min_samples = 7;
  rule.min_time = 0;
  rule.max_noise = 0.01;
  rule.timeout = 100;
  bb::Measurement m;
  int n = 0;
  // Constant samples: converged as soon as the minimum count is reached.
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<double> { return ++n, 0.002; }, rule, m).ok());
  EXPECT_EQ(n, 7);
  EXPECT_EQ(m.stats.samples, 7u);
  EXPECT_EQ(m.stop, bb::StopReason::converged);
  EXPECT_DOUBLE_EQ(m.stats.median, 0.002);

  // Alternating samples never converge at 1% noise: max_samples ends it.
  rule.max_samples = 40;
  n = 0;
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<double> { return (++n % 2) ? 1.0 : 3.0; }, rule, m).ok());
  EXPECT_EQ(m.stats.samples, 40u);
  EXPECT_EQ(m.stop, bb::StopReason::max_samples);
  EXPECT_DOUBLE_EQ(m.stats.median, 2.0);

  n = 0;
  auto s = bb::sample_until_stopped([&]() -> bb::Expected<double> {
    if (++n == 3) return bb::make_error("device lost");
    return 1.0;
  }, rule, m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "device lost");
}
