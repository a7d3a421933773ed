#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "measure/cpu_cache.hpp"
#include "measure/cpu_timer.hpp"
#include "measure/measurement.hpp"
#include "measure/stats.hpp"

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

TEST(StopRule, ANoiseThatStopsImprovingEndsSamplingBeforeTheBudget) {
  bb::StopRule rule;
  rule.min_samples = 10;
  rule.min_time = 0;
  rule.max_noise = 0.001;  // never reached by the samples below
  rule.timeout = 100;
  bb::StopState s(rule);
  // A repeating pattern with 2% noise: its relative stdev settles as samples accumulate.
  const double pattern[] = {1.00, 1.02, 0.98, 1.03, 0.97, 1.01, 0.99};
  std::size_t n = 0;
  while (s.reason(1.0) == bb::StopReason::running && n < 100000) s.add(pattern[n++ % 7]);
  EXPECT_EQ(s.reason(1.0), bb::StopReason::noise_plateau);
  EXPECT_EQ(n % bb::StopState::kPlateauEvery, 0u);  // decided at a check
  EXPECT_GE(n, bb::StopState::kPlateauEvery * bb::StopState::kPlateauChecks);
  EXPECT_LT(n, 100000u);
  EXPECT_GT(s.rel_stdev(), rule.max_noise);

  // A noise still falling (samples closing in on one value) is no plateau.
  bb::StopState falling(rule);
  for (int i = 0; i < 300; ++i) falling.add(i < 50 ? (i % 2 ? 1.5 : 0.5) : 1.0);
  EXPECT_EQ(falling.reason(1.0), bb::StopReason::running);
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

TEST(StopRule, MinTimeCountsWholeRegionsOfBatchedSamples) {
  bb::StopRule rule;
  rule.min_samples = 2;
  rule.min_time = 1.0;
  rule.timeout = 100;
  bb::StopState s(rule);
  s.add(0.01, 0.5);  // a sample of 50 calls of 10 ms
  EXPECT_EQ(s.reason(0.0), bb::StopReason::running);
  s.add(0.01, 0.5);
  EXPECT_DOUBLE_EQ(s.measured_time(), 1.0);
  EXPECT_EQ(s.reason(0.0), bb::StopReason::converged);
}

namespace {
bb::Sample sample_of(double seconds, bool throttled = false, double mhz = 0) {
  bb::Sample s;
  s.seconds = s.region_seconds = seconds;
  s.host_seconds = seconds * 2;
  s.throttled = throttled;
  s.clock_mhz = mhz;
  return s;
}
}  // namespace

TEST(CpuTimer, BatchesShortCallsInHotModeAndNeverFlushes) {
  // A call with no work: the hot timer must batch it (one call is far below min_sample_time)
  // and stop on one of the rule's reasons. Nothing here asserts a duration.
  bb::TimingOptions o;
  o.mode = bb::TimingMode::hot;
  o.rule.min_samples = 5;
  o.rule.max_samples = 50;
  o.rule.min_time = 0;
  o.rule.timeout = 1.0;
  o.warmup_time = 0.001;
  o.min_sample_time = 1e-4;
  int calls = 0, flushes = 0;
  auto m = bb::measure_cpu([&] { return ++calls, 0; }, [&] { ++flushes; }, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->mode, bb::TimingMode::hot);
  EXPECT_GT(m->batch, 1u);
  EXPECT_EQ(flushes, 0);
  EXPECT_GE(m->stats.samples, 5u);
  EXPECT_LE(m->stats.samples, 50u);
  EXPECT_NE(m->stop, bb::StopReason::running);
  EXPECT_EQ(static_cast<size_t>(calls), m->warmup_calls + m->stats.samples * m->batch);
}

TEST(CpuTimer, ColdModeFlushesBeforeEverySampleOfOneCall) {
  bb::TimingOptions o;  // cold is the default
  o.rule.min_samples = 8;
  o.rule.max_samples = 8;
  o.rule.timeout = 10;
  o.warmup_time = 0;
  int calls = 0, flushes = 0, calls_at_flush = -1;
  bool flush_between = true;
  auto m = bb::measure_cpu(
      [&] {
        ++calls;
        return 0;
      },
      [&] {
        // every flush comes after exactly one more call than the last one (warm-up: one call)
        if (calls_at_flush >= 0 && calls != calls_at_flush + 1) flush_between = false;
        calls_at_flush = calls;
        ++flushes;
      },
      o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->mode, bb::TimingMode::cold);
  EXPECT_EQ(m->batch, 1u);
  EXPECT_EQ(m->stats.samples, 8u);
  EXPECT_EQ(m->stop, bb::StopReason::max_samples);
  EXPECT_EQ(flushes, 8);
  EXPECT_TRUE(flush_between);
  EXPECT_EQ(static_cast<size_t>(calls), m->warmup_calls + 8);
  EXPECT_EQ(m->host.samples, 8u);  // the CPU's host time is its time
  EXPECT_DOUBLE_EQ(m->host.median, m->stats.median);
}

TEST(CpuTimer, AFailingCallStopsTheMeasurement) {
  bb::TimingOptions o;
  int calls = 0;
  auto m = bb::measure_cpu([&] { return ++calls == 3 ? 7 : 0; }, nullptr, o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("returned 7"), std::string::npos);
}

TEST(CpuCache, EvictionLeavesTheBytesAsTheyWere) {
  std::vector<unsigned char> data(1 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 131 + 7);
  const auto copy = data;
  bb::evict_from_cpu_caches(data.data() + 3, data.size() - 5);  // unaligned ends
  bb::evict_from_cpu_caches(nullptr, 0);
  EXPECT_EQ(std::memcmp(data.data(), copy.data(), data.size()), 0);
  // Either instruction, dirty lines included: written back, not lost.
  for (auto with : {bb::EvictWith::clflush, bb::EvictWith::clflushopt}) {
    for (size_t i = 0; i < data.size(); i += 61) data[i] ^= 0x5a;
    const auto dirty = data;
    bb::evict_from_cpu_caches(data.data() + 1, data.size() - 1, with);
    EXPECT_EQ(std::memcmp(data.data(), dirty.data(), data.size()), 0);
  }
}

TEST(CpuCache, TheBestInstructionIsTheOneTheCpuOffers) {
  const std::string with = bb::evict_instruction();
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool listed = false;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      listed = (" " + line + " ").find(" clflushopt ") != std::string::npos;
      break;
    }
  EXPECT_EQ(with, listed ? "clflushopt" : "clflush");
#elif defined(__aarch64__)
  EXPECT_EQ(with, "dc civac");
#else
  EXPECT_EQ(with, "displace");
#endif
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
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<bb::Sample> { return ++n, sample_of(0.002); }, rule, m).ok());
  EXPECT_EQ(n, 7);
  EXPECT_EQ(m.stats.samples, 7u);
  EXPECT_EQ(m.stop, bb::StopReason::converged);
  EXPECT_DOUBLE_EQ(m.stats.median, 0.002);
  EXPECT_DOUBLE_EQ(m.host.median, 0.004);
  EXPECT_NEAR(m.measured_time, 0.014, 1e-12);
  EXPECT_TRUE(m.notes.empty());

  // Alternating samples never converge at 1% noise: max_samples ends it.
  rule.max_samples = 40;
  n = 0;
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<bb::Sample> { return sample_of((++n % 2) ? 1.0 : 3.0); }, rule, m).ok());
  EXPECT_EQ(m.stats.samples, 40u);
  EXPECT_EQ(m.stop, bb::StopReason::max_samples);
  EXPECT_DOUBLE_EQ(m.stats.median, 2.0);
  EXPECT_DOUBLE_EQ(m.stats.iqr, 2.0);
  EXPECT_NEAR(m.stats.rel_stdev, std::sqrt(40.0 / 39.0) / 2.0, 1e-12);

  n = 0;
  auto s = bb::sample_until_stopped([&]() -> bb::Expected<bb::Sample> {
    if (++n == 3) return bb::make_error("device lost");
    return sample_of(1.0);
  }, rule, m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "device lost");
}

TEST(Sampling, TheBudgetEndsANoisyRunAndSaysSo) {
  bb::StopRule rule;
  rule.min_samples = 3;
  rule.max_samples = 1000000;
  rule.min_time = 1e6;  // never reached: neither convergence nor a plateau may end the run
  rule.max_noise = 0.01;
  rule.timeout = 0.02;  // seconds of wall time
  bb::Measurement m;
  int n = 0;
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<bb::Sample> { return sample_of((++n % 2) ? 1.0 : 2.0); }, rule, m).ok());
  EXPECT_EQ(m.stop, bb::StopReason::timeout);
  EXPECT_GE(m.stats.samples, 3u);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("budget"), std::string::npos);
}

TEST(Sampling, ThrottledSamplesAreDiscardedCountedAndReported) {
  bb::StopRule rule;
  rule.min_samples = 5;
  rule.max_samples = 5;
  rule.min_time = 0;
  rule.timeout = 100;
  bb::Measurement m;
  int n = 0;
  // Every third sample is throttled (900 MHz) and ten times slower: none of them may count.
  auto sample = [&]() -> bb::Expected<bb::Sample> {
    ++n;
    if (n % 3 == 0) return sample_of(10.0, true, 900 + n);
    return sample_of(1.0, false, 1980);
  };
  ASSERT_TRUE(bb::sample_until_stopped(sample, rule, m).ok());
  EXPECT_EQ(m.stats.samples, 5u);
  EXPECT_EQ(m.throttled, 2u);  // samples 3 and 6 came among the first 7
  EXPECT_EQ(n, 7);
  EXPECT_DOUBLE_EQ(m.stats.max, 1.0);
  EXPECT_DOUBLE_EQ(m.clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(m.min_clock_mhz, 903);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("2 sample(s) discarded"), std::string::npos);
  EXPECT_NE(m.notes[0].find("903 MHz"), std::string::npos);
}

TEST(Sampling, WhenEverySampleIsThrottledTheyAreKeptWithAWarning) {
  bb::StopRule rule;
  rule.min_samples = 3;
  rule.timeout = 0.01;
  bb::Measurement m;
  ASSERT_TRUE(bb::sample_until_stopped([&]() -> bb::Expected<bb::Sample> { return sample_of(2.0, true, 700); }, rule, m).ok());
  EXPECT_EQ(m.stop, bb::StopReason::timeout);
  EXPECT_GE(m.stats.samples, 3u);
  EXPECT_EQ(m.throttled, m.stats.samples);
  EXPECT_DOUBLE_EQ(m.stats.median, 2.0);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("every sample"), std::string::npos);
}

TEST(Throttle, ClockFromProbesAndTheThreshold) {
  // 1980 cycles per microsecond over 50 us: 1980 MHz.
  EXPECT_DOUBLE_EQ(bb::clock_mhz_between(1000, 5000, 1000 + 99000, 55000), 1980.0);
  EXPECT_EQ(bb::clock_mhz_between(1000, 5000, 2000, 5500), 0.0);   // a window too short to read
  EXPECT_EQ(bb::clock_mhz_between(5000, 5000, 1000, 60000), 0.0);  // the counter went backwards
  EXPECT_EQ(bb::clock_mhz_between(1000, 60000, 9000, 5000), 0.0);  // so did the timer
  EXPECT_TRUE(bb::is_throttled(1400, 1980, 0.75));
  EXPECT_FALSE(bb::is_throttled(1500, 1980, 0.75));
  EXPECT_FALSE(bb::is_throttled(100, 1980, 0.0));  // the check is off
  EXPECT_FALSE(bb::is_throttled(0, 1980, 0.75));   // clock unknown: kept
}
