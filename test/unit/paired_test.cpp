// The paired speedup's statistics and the stop on what is reported, on controlled inputs.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "measure/paired.hpp"
#include "measure/paired_timer.hpp"

namespace {

// Blocks whose baseline takes `base` seconds and whose implementation takes base / ratio_k.
std::vector<double> scaled(const std::vector<double>& base, const std::vector<double>& ratio) {
  std::vector<double> out;
  for (std::size_t k = 0; k < base.size(); ++k) out.push_back(base[k] / ratio[k]);
  return out;
}

}  // namespace

TEST(MedianInterval, RanksAndCoverageAreTheBinomialOnes) {
  // n = 16: P(X <= 2) = 137 / 65536, so [x_(3), x_(14)] covers the median with 99.58%.
  auto r = bb::median_interval_rank(16, 0.99);
  EXPECT_EQ(r.j, 3u);
  EXPECT_NEAR(r.coverage, 1 - 2 * 137.0 / 65536, 1e-12);
  // At 95%: P(X <= 3) = 697 / 65536 -> 97.87%; P(X <= 4) = 2517 / 65536 -> 92.3%: j = 4.
  r = bb::median_interval_rank(16, 0.95);
  EXPECT_EQ(r.j, 4u);
  EXPECT_NEAR(r.coverage, 1 - 2 * 697.0 / 65536, 1e-12);
  // Too few pairs for the level: the whole range, with its true (lower) coverage.
  r = bb::median_interval_rank(5, 0.99);
  EXPECT_EQ(r.j, 1u);
  EXPECT_NEAR(r.coverage, 1 - 2.0 / 32, 1e-12);
  // Many pairs: no overflow, coverage just above the level.
  r = bb::median_interval_rank(2000, 0.99);
  EXPECT_GT(r.j, 900u);
  EXPECT_GE(r.coverage, 0.99);
  EXPECT_LT(r.coverage, 0.995);
}

TEST(PairedSpeedup, DriftCommonToBothSidesCancels) {
  // The clock ramps up over the run: both sides get 40% faster from the first block to the last.
  // Timed one after the other, the baseline (early) would look slow; paired, the ratio is exact.
  std::vector<double> base, ratio(16, 1.25);
  for (int k = 0; k < 16; ++k) base.push_back(10e-6 * (1.0 - 0.4 * k / 15.0));
  const auto s = bb::paired_speedup(base, scaled(base, ratio));
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->speedup, 1.25, 1e-12);
  EXPECT_NEAR(s->low, 1.25, 1e-12);
  EXPECT_NEAR(s->high, 1.25, 1e-12);
  EXPECT_TRUE(s->significant());
  EXPECT_EQ(s->pairs, 16u);
}

TEST(PairedSpeedup, AnImplementationAgainstItselfHasNoSignificantDifference) {
  // Same kernel both sides: the ratios scatter around 1 (±3%, symmetric); the interval holds 1.
  const std::vector<double> ratio{1.01, 0.99, 1.02, 0.98, 1.00, 1.03, 0.97, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.00};
  const std::vector<double> base(16, 5e-6);
  const auto s = bb::paired_speedup(base, scaled(base, ratio));
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->speedup, 1.0, 1e-9);
  EXPECT_LT(s->low, 1.0);
  EXPECT_GT(s->high, 1.0);
  EXPECT_FALSE(s->significant());
  // The interval is the 3rd lowest and 3rd highest ratio.
  EXPECT_NEAR(s->low, 0.98, 1e-12);
  EXPECT_NEAR(s->high, 1.02, 1e-12);
}

TEST(PairedSpeedup, OutliersMoveNeitherTheSpeedupNorTheInterval) {
  // Two pairs hit by a preemption (one side 10x slow) change nothing: medians and ranks.
  std::vector<double> ratio(16, 0.8);
  ratio[3] = 8.0;
  ratio[9] = 0.08;
  const std::vector<double> base(16, 2e-3);
  const auto s = bb::paired_speedup(base, scaled(base, ratio));
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->speedup, 0.8, 1e-12);
  EXPECT_NEAR(s->low, 0.8, 1e-12);
  EXPECT_NEAR(s->high, 0.8, 1e-12);
  EXPECT_TRUE(s->significant());  // slower than the baseline, significantly
}

TEST(PairedSpeedup, UnusablePairsAreLeftOut) {
  const double nan = std::nan("");
  const auto s = bb::paired_speedup({1e-6, 0, nan, 2e-6, 3e-6}, {0.5e-6, 1e-6, 1e-6, -1, 1.5e-6});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pairs, 2u);
  EXPECT_NEAR(s->speedup, 2.0, 1e-12);
  EXPECT_FALSE(bb::paired_speedup({0, nan}, {1e-6, 1e-6}));
  EXPECT_FALSE(bb::paired_speedup({}, {}));
}

TEST(GeomeanInterval, CombinesCasesOnTheLogScale) {
  EXPECT_NEAR(bb::normal_quantile_two_sided(0.95), 1.959964, 1e-5);
  EXPECT_NEAR(bb::normal_quantile_two_sided(0.99), 2.575829, 1e-5);
  // Two cases, 2x and 0.5x, each with an interval of exactly one standard error of 0.1 (log)
  // at 95%: geomean 1, standard error sqrt(0.01 + 0.01) / 2, half-width z95 of that.
  const double z = bb::normal_quantile_two_sided(0.95);
  bb::SpeedupInterval a{2.0, 2.0 * std::exp(-0.1 * z), 2.0 * std::exp(0.1 * z), 0.95, 16};
  bb::SpeedupInterval b{0.5, 0.5 * std::exp(-0.1 * z), 0.5 * std::exp(0.1 * z), 0.95, 16};
  const auto g = bb::geomean_interval({a, b}, 0.95);
  ASSERT_TRUE(g);
  EXPECT_NEAR(g->speedup, 1.0, 1e-12);
  EXPECT_NEAR(std::log(g->high), z * std::sqrt(0.02) / 2, 1e-9);
  EXPECT_NEAR(std::log(g->low), -z * std::sqrt(0.02) / 2, 1e-9);
  EXPECT_FALSE(g->significant());
  // Many cases each barely significant make a geomean that is clearly so.
  std::vector<bb::SpeedupInterval> many(10, bb::SpeedupInterval{1.05, 1.001, 1.10, 0.99, 16});
  const auto m = bb::geomean_interval(many);
  ASSERT_TRUE(m);
  EXPECT_GT(m->low, 1.02);
  EXPECT_TRUE(m->significant());
  EXPECT_FALSE(bb::geomean_interval({}));
}

// An implementation against a copy of itself across many cases: each case's interval holds
// 1.00 only by its widening to the processes' floor (4% here: 200 ns on a 5 us kernel), and
// each reads the same 1.5% bias of two processes. The bias is not noise: averaging cases must
// not shrink the floor away, or the summary reads a self-speedup as significant.
TEST(GeomeanInterval, KeepsTheProcessesFloorWhateverTheNumberOfCases) {
  bb::SpeedupInterval stat{1.015, 1.005, 1.025, 0.99, 16};
  const auto one = bb::widen_to_resolution(stat, 5e-6 * 1.015, 5e-6, bb::kProcessFloor);
  EXPECT_NEAR(one.resolution, 0.04, 1e-9);
  EXPECT_LT(one.low, 1.0);
  const std::vector<bb::SpeedupInterval> cases(12, one);
  const auto g = bb::geomean_interval(cases);
  ASSERT_TRUE(g);
  EXPECT_NEAR(g->speedup, 1.015, 1e-9);
  EXPECT_FALSE(g->significant()) << "[" << g->low << ", " << g->high << "]";
  EXPECT_LT(g->low, 1.015 / 1.04 + 1e-9);  // at least the floor either side
  // Without the floor recorded, the same intervals shrink with the cases (the old summary).
  std::vector<bb::SpeedupInterval> unmarked(12, one);
  for (auto& c : unmarked) c.resolution = 0;
  EXPECT_TRUE(bb::geomean_interval(unmarked)->significant());
  // A real speedup well beyond the floor stays significant.
  bb::SpeedupInterval fast = bb::widen_to_resolution({1.5, 1.45, 1.55, 0.99, 16}, 7.5e-6, 5e-6, bb::kProcessFloor);
  EXPECT_TRUE(bb::geomean_interval(std::vector<bb::SpeedupInterval>(4, fast))->significant());
}

// measure_paired with a fake timer: which side runs when, with what budget, and how the blocks
// are pooled. Side A (the baseline) "takes" 2 us, side B 1 us, both drifting 1% per block.
TEST(MeasurePaired, AlternatesBlocksSplitsTheBudgetAndPools) {
  std::vector<char> order;
  std::vector<bb::TimingOptions> seen;
  int block = 0;
  auto fake = [&](bool baseline, const bb::TimingOptions& o) -> bb::Expected<bb::Measurement> {
    order.push_back(baseline ? 'A' : 'B');
    seen.push_back(o);
    const double drift = 1.0 + 0.01 * block++;
    bb::Measurement m;
    m.samples = {(baseline ? 2e-6 : 1e-6) * drift, (baseline ? 2e-6 : 1e-6) * drift * 1.1};
    m.host_samples = m.samples;
    m.stats = bb::summarize(m.samples);
    m.measured_time = 1e-3;
    m.warmup_calls = 1;
    m.notes = {"the 0.125 s budget ended sampling at 3.00% noise (target 1%)", "a note worth keeping"};
    return m;
  };
  bb::TimingOptions options;
  options.rule.min_samples = 10;
  options.rule.min_time = 0.4;
  options.rule.timeout = 1.6;
  options.warmup_time = 0.05;
  bb::BlockStop four;
  four.min_blocks = four.max_blocks = 4;
  four.max_half_width = 0.5;  // stops at 4 pairs on the interval, with no note of its own
  const auto p = bb::measure_paired(fake, options, four);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(std::string(order.begin(), order.end()), "ABBAABBA");
  // Each side: the rule's budget over 4 blocks; the warm-up before its first block only.
  EXPECT_DOUBLE_EQ(seen[0].rule.min_time, 0.1);
  EXPECT_DOUBLE_EQ(seen[0].rule.timeout, 0.4);
  EXPECT_EQ(seen[0].rule.min_samples, 3u);
  EXPECT_GE(seen[0].rule.max_noise, 1e300);  // a block stops at its minimum: noise is judged across blocks
  EXPECT_DOUBLE_EQ(seen[0].warmup_time, 0.05);  // A's first
  EXPECT_DOUBLE_EQ(seen[1].warmup_time, 0.05);  // B's first
  for (std::size_t k = 2; k < seen.size(); ++k) EXPECT_DOUBLE_EQ(seen[k].warmup_time, 0.0) << k;
  // Pooled: every sample of a side, times summed, one copy of a note, no per-block stop notes.
  EXPECT_EQ(p->impl.samples.size(), 8u);
  EXPECT_EQ(p->baseline.samples.size(), 8u);
  EXPECT_DOUBLE_EQ(p->impl.measured_time, 4e-3);
  EXPECT_EQ(p->impl.warmup_calls, 4u);
  EXPECT_EQ(p->impl.notes, std::vector<std::string>{"a note worth keeping"});
  // The drift cancels within each pair (1% per block makes a pair's ratio 2 x 1.01^±1 at most).
  ASSERT_TRUE(p->speedup);
  EXPECT_NEAR(p->speedup->speedup, 2.0, 0.03);
  EXPECT_EQ(p->speedup->pairs, 4u);
}

TEST(MeasurePaired, ABaselineErrorSaysSo) {
  auto fake = [](bool baseline, const bb::TimingOptions&) -> bb::Expected<bb::Measurement> {
    if (baseline) return bb::make_error("returned 3: no");
    bb::Measurement m;
    m.samples = {1e-6};
    m.stats = bb::summarize(m.samples);
    return m;
  };
  const auto p = bb::measure_paired(fake, bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "baseline: returned 3: no");
}

// A call too slow for its block's share of the budget (90 ms against 2 s over 16 blocks): after the
// first pair the blocks take one sample each, so the paired minimum does not overrun the budget
// (and the worker's deadline) many times over. Fast calls keep the rule's minimum.
TEST(MeasurePaired, SlowCallsTakeOneSamplePerBlockAfterTheFirstPair) {
  for (const double call_s : {0.09, 1e-5}) {
    std::vector<bb::TimingOptions> seen;
    auto fake = [&](bool, const bb::TimingOptions& o) -> bb::Expected<bb::Measurement> {
      seen.push_back(o);
      bb::Measurement m;
      m.samples = {call_s};
      m.stats = bb::summarize(m.samples);
      return m;
    };
    bb::TimingOptions options;  // the defaults: 2 s budget, 10 samples at least
    bb::BlockStop sixteen;
    sixteen.min_blocks = sixteen.max_blocks = 16;
    const auto p = bb::measure_paired(fake, options, sixteen);
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(seen.size(), 32u);
    EXPECT_EQ(seen[0].rule.min_samples, 3u);
    EXPECT_EQ(seen[1].rule.min_samples, 3u);
    for (std::size_t k = 2; k < seen.size(); ++k) EXPECT_EQ(seen[k].rule.min_samples, call_s > 0.01 ? 1u : 3u) << call_s << " " << k;
    EXPECT_EQ(p->speedup->pairs, 16u);
  }
}

// Two workers on one device differ by a little no number of blocks averages away: the interval
// of a device pairing is widened to what separate processes can resolve, never narrowed.
TEST(PairedSpeedup, ADeviceIntervalIsWidenedToTheProcessesResolution) {
  bb::SpeedupInterval s;
  s.speedup = 1.0137, s.low = 1.0136, s.high = 1.0205;  // H100, 4.67 us, against a copy of itself
  const auto w = bb::widen_to_resolution(s, 4.73e-6, 4.67e-6, bb::kProcessFloor);
  EXPECT_DOUBLE_EQ(w.speedup, s.speedup);
  EXPECT_FALSE(w.significant());
  EXPECT_NEAR(w.low, 1.0136 / (1 + 200e-9 / 4.67e-6), 1e-12);  // the absolute floor over the faster median
  // A long call: the relative floor.
  s.speedup = 1.0009, s.low = 1.0003, s.high = 1.0014;
  const auto l = bb::widen_to_resolution(s, 187.2e-6, 187.0e-6, bb::kProcessFloor);
  EXPECT_NEAR(l.high, 1.0014 * 1.003, 1e-12);
  EXPECT_FALSE(l.significant());
  // A real difference stays significant.
  s.speedup = 2.0, s.low = 1.9, s.high = 2.1;
  EXPECT_TRUE(bb::widen_to_resolution(s, 10e-6, 5e-6, bb::kProcessFloor).significant());
  // No floor: unchanged.
  const auto same = bb::widen_to_resolution(s, 10e-6, 5e-6, bb::ResolutionFloor{});
  EXPECT_EQ(same.low, s.low);
  EXPECT_EQ(same.high, s.high);
}

namespace {
// A fake side whose blocks' medians follow `medians(side, block)`; counts the blocks.
struct FakeSides {
  std::function<double(bool baseline, int block)> medians;
  int blocks[2] = {0, 0};
  double sleep_s = 0;
  bb::Expected<bb::Measurement> operator()(bool baseline, const bb::TimingOptions&) {
    const int k = blocks[baseline]++;
    if (sleep_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
    bb::Measurement m;
    m.samples = {medians(baseline, k)};
    m.stats = bb::summarize(m.samples);
    return m;
  }
};
}  // namespace

// The stop is on what is reported: steady ratios stop at the fewest pairs, with the interval
// within the target; noisy ratios go on until the interval narrows.
TEST(MeasurePaired, StopsOnceTheSpeedupsIntervalIsNarrowEnough) {
  FakeSides steady{[](bool baseline, int k) { return (baseline ? 2e-6 : 1e-6) * (1 + 0.001 * (k % 3)); }};
  const auto p = bb::measure_paired(std::ref(steady), bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->speedup->pairs, bb::kMinPairs);
  EXPECT_EQ(p->impl.stop, bb::StopReason::converged);
  EXPECT_LE(p->speedup->half_width(), 0.01);
  EXPECT_TRUE(p->impl.notes.empty());

  // Ratios spread ±5% around 2, alternating: the whole range of 8 or 10 pairs is too wide; the
  // order-statistic interval of more pairs drops the extremes and narrows.
  FakeSides noisy{[](bool baseline, int k) {
    if (baseline) return 2e-6;
    static const double spread[] = {0.95, 1.05, 1.0, 1.0, 0.999, 1.001, 1.0, 1.0};
    return 1e-6 * spread[k % 8];
  }};
  const auto n = bb::measure_paired(std::ref(noisy), bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_GT(n->speedup->pairs, bb::kMinPairs);
  EXPECT_LT(n->speedup->pairs, bb::kMaxPairs);
  EXPECT_EQ(n->impl.stop, bb::StopReason::converged);
  EXPECT_LE(n->speedup->half_width(), 0.01);
}

// Where the interval cannot get narrow, the budget ends the pairing, and a note says how far
// it got; without a budget, the most pairs do.
TEST(MeasurePaired, TheBudgetOrTheMostPairsEndAPairingThatStaysWide) {
  auto wild = [](bool baseline, int k) { return baseline ? 1e-6 : 1e-6 * (k % 2 ? 0.5 : 2.0); };
  FakeSides slow{wild};
  slow.sleep_s = 0.01;
  bb::TimingOptions options;
  options.rule.timeout = 0.1;  // per side: both together 0.2 s, 20 ms a pair
  const auto p = bb::measure_paired(std::ref(slow), options, bb::BlockStop{});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->impl.stop, bb::StopReason::timeout);
  EXPECT_GE(p->speedup->pairs, bb::kMinPairs);
  EXPECT_LT(p->speedup->pairs, bb::kMaxPairs);
  ASSERT_EQ(p->impl.notes.size(), 1u);
  EXPECT_NE(p->impl.notes[0].find("the 0.1 s budget ended timing after"), std::string::npos) << p->impl.notes[0];
  EXPECT_NE(p->impl.notes[0].find("(target ±1%)"), std::string::npos) << p->impl.notes[0];

  FakeSides fast{wild};
  const auto m = bb::measure_paired(std::ref(fast), bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->impl.stop, bb::StopReason::max_samples);
  EXPECT_EQ(m->speedup->pairs, bb::kMaxPairs);
  ASSERT_EQ(m->impl.notes.size(), 1u);
  EXPECT_NE(m->impl.notes[0].find("the most blocks ended timing after 64 pairs"), std::string::npos) << m->impl.notes[0];
}

// A device pairing's floor (what two processes can resolve) is as far as the interval needs to
// narrow: 200 ns on a 5 us kernel is 4%, so ratios within ±3% stop at the fewest pairs.
TEST(MeasurePaired, ADeviceFloorWiderThanTheTargetIsNarrowEnough) {
  auto spread = [](bool baseline, int k) { return baseline ? 5e-6 : 5e-6 * (k % 2 ? 0.97 : 1.03); };
  FakeSides device{spread}, cpu{spread};
  bb::BlockStop stop;
  stop.floor = bb::kProcessFloor;
  const auto d = bb::measure_paired(std::ref(device), bb::TimingOptions{}, stop);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->speedup->pairs, bb::kMinPairs);
  EXPECT_EQ(d->impl.stop, bb::StopReason::converged);
  const auto c = bb::measure_paired(std::ref(cpu), bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_GT(c->speedup->pairs, bb::kMinPairs);  // without the floor ±3% is too wide
}

// Where the floor is wider than the target, the interval stops at the floor however many samples
// a block takes: after the first pair, blocks take only what keeps their medians' 99% error
// within half the floor (24 at least). A call the floor does not limit (100 us: 0.3%),
// or a pairing without a floor, keeps its blocks as they were.
TEST(MeasurePaired, FloorLimitedPairingsTakeSmallerBlocks) {
  for (const double call_s : {4.3e-6, 100e-6})
    for (const bool with_floor : {true, false}) {
      std::vector<std::size_t> max_samples;
      auto fake = [&](bool baseline, const bb::TimingOptions& o) -> bb::Expected<bb::Measurement> {
        max_samples.push_back(o.rule.max_samples);
        bb::Measurement m;
        for (std::size_t i = 0; i < std::min<std::size_t>(o.rule.max_samples, 200); ++i)  // +-2% spread, both sides alike
          m.samples.push_back(call_s * (baseline ? 1.0 : 1.001) * (0.98 + 0.04 * static_cast<double>(i % 11) / 10));
        m.stats = bb::summarize(m.samples);
        return m;
      };
      bb::BlockStop stop;
      if (with_floor) stop.floor = bb::kProcessFloor;
      const auto p = bb::measure_paired(fake, bb::TimingOptions{}, stop);
      ASSERT_TRUE(p) << p.error().message;
      ASSERT_GE(max_samples.size(), 4u);
      EXPECT_EQ(max_samples[0], bb::kBlockSamples);
      EXPECT_EQ(max_samples[1], bb::kBlockSamples);
      const bool limited = with_floor && call_s < 20e-6;
      for (std::size_t k = 2; k < max_samples.size(); ++k)
        if (limited) {
          EXPECT_GE(max_samples[k], 24u) << k;
          EXPECT_LT(max_samples[k], bb::kBlockSamples) << k;
        } else {
          EXPECT_EQ(max_samples[k], bb::kBlockSamples) << call_s << " " << with_floor << " " << k;
        }
      if (limited) EXPECT_EQ(p->impl.stop, bb::StopReason::converged);
    }
}

// A pairing still too wide after its fewest pairs spends the rest of its budget measuring: its
// later blocks measure at least as long as a block costs to serve beyond its samples (here 5 ms
// of round trip against 0.2 ms measured), within a block's share of the budget. One that
// converges at its fewest pairs keeps its blocks as they were.
TEST(MeasurePaired, AWidePairingsLaterBlocksMeasureAtLeastTheirOverhead) {
  for (const bool wide : {true, false}) {
    std::vector<double> min_times;
    int blocks = 0;
    auto fake = [&](bool baseline, const bb::TimingOptions& o) -> bb::Expected<bb::Measurement> {
      min_times.push_back(o.rule.min_time);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const int k = blocks++;
      bb::Measurement m;
      m.samples = {baseline ? 1e-4 : 1e-4 * (wide ? (k % 4 < 2 ? 0.7 : 1.3) : 1.0)};
      m.stats = bb::summarize(m.samples);
      m.measured_time = 2e-4;
      return m;
    };
    bb::TimingOptions options;
    options.rule.timeout = 0.5;  // per side; a block's share 0.5 / 8
    const auto p = bb::measure_paired(fake, options, bb::BlockStop{});
    ASSERT_TRUE(p) << p.error().message;
    const std::size_t fewest = 2 * bb::kMinPairs;
    ASSERT_GE(min_times.size(), fewest);
    for (std::size_t k = 0; k < fewest; ++k) EXPECT_DOUBLE_EQ(min_times[k], options.rule.min_time / bb::kMinPairs) << k;
    if (!wide) {
      EXPECT_EQ(min_times.size(), fewest);
      continue;
    }
    ASSERT_GT(min_times.size(), fewest) << "a wide pairing goes on";
    for (std::size_t k = fewest; k < min_times.size(); ++k) {
      EXPECT_GE(min_times[k], 0.0045) << k;  // the 5 ms a block costs, less its measured 0.2 ms
      EXPECT_LE(min_times[k], options.rule.timeout / bb::kMinPairs) << k;
    }
  }
}

// Timed alone, the stop is on the interval of the blocks' median.
TEST(MeasureBlocks, StopsOnceTheMediansIntervalIsNarrowEnough) {
  int blocks = 0;
  auto steady = [&](const bb::TimingOptions&) -> bb::Expected<bb::Measurement> {
    bb::Measurement m;
    m.samples = {1e-6 * (1 + 0.002 * (blocks++ % 2))};
    m.stats = bb::summarize(m.samples);
    return m;
  };
  const auto m = bb::measure_blocks(steady, bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(blocks, static_cast<int>(bb::kMinPairs));
  EXPECT_EQ(m->stop, bb::StopReason::converged);

  blocks = 0;
  auto wild = [&](const bb::TimingOptions&) -> bb::Expected<bb::Measurement> {
    bb::Measurement m;
    m.samples = {1e-6 * (blocks++ % 2 ? 0.5 : 2.0)};
    m.stats = bb::summarize(m.samples);
    return m;
  };
  const auto w = bb::measure_blocks(wild, bb::TimingOptions{}, bb::BlockStop{});
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(blocks, static_cast<int>(bb::kMaxPairs));
  EXPECT_EQ(w->stop, bb::StopReason::max_samples);
  ASSERT_EQ(w->notes.size(), 1u);
  EXPECT_NE(w->notes[0].find("the median's interval"), std::string::npos) << w->notes[0];
}

TEST(MedianInterval, HalfWidthOfTheMedian) {
  EXPECT_FALSE(std::isfinite(bb::median_half_width({1.0})));
  // 8 values: the interval is their whole range (99.2%).
  EXPECT_NEAR(bb::median_half_width({1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.99, 1.02}), 0.02, 1e-12);
}
