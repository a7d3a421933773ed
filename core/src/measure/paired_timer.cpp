#include "measure/paired_timer.hpp"

#include "measure/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace bb {

Measurement pool_blocks(const std::vector<Measurement>& blocks) {
  Measurement m;
  if (blocks.empty()) return m;
  m.mode = blocks.front().mode;
  m.batch = blocks.front().batch;
  std::vector<double> clocks;
  for (const auto& b : blocks) {
    m.samples.insert(m.samples.end(), b.samples.begin(), b.samples.end());
    m.host_samples.insert(m.host_samples.end(), b.host_samples.begin(), b.host_samples.end());
    m.warmup_calls += b.warmup_calls;
    m.wall_time += b.wall_time;
    m.measured_time += b.measured_time;
    m.throttled += b.throttled;
    if (b.clock_mhz > 0) clocks.push_back(b.clock_mhz);
    if (b.min_clock_mhz > 0) m.min_clock_mhz = m.min_clock_mhz > 0 ? std::min(m.min_clock_mhz, b.min_clock_mhz) : b.min_clock_mhz;
    m.blocking = m.blocking || b.blocking;
    m.batch = std::max(m.batch, b.batch);
    for (const auto& n : b.notes)  // each block's own stop says nothing of the whole
      if (!is_stop_note(n) && std::find(m.notes.begin(), m.notes.end(), n) == m.notes.end()) m.notes.push_back(n);
  }
  m.stats = summarize(m.samples);
  m.host = summarize(m.host_samples);
  m.clock_mhz = clocks.empty() ? 0 : summarize(clocks).median;
  m.stop = blocks.back().stop;
  m.eviction = blocks.back().eviction;
  m.samples_per_sync = blocks.back().samples_per_sync;
  m.event_cost = blocks.back().event_cost;
  return m;
}

BlockStop block_stop(const TimingOptions& options) {
  BlockStop s;
  s.max_half_width = options.rule.max_noise;
  return s;
}

namespace {
using Clock = std::chrono::steady_clock;

// A block's share of the rule (a fixed size: it stops at its minimum), and the first block's
// warm-up.
std::pair<TimingOptions, TimingOptions> block_options(const TimingOptions& options, std::size_t min_blocks) {
  const double k = static_cast<double>(min_blocks);
  TimingOptions block = options;
  block.rule.min_samples = std::max<std::size_t>(3, static_cast<std::size_t>(std::ceil(static_cast<double>(options.rule.min_samples) / k)));
  // At most kBlockSamples: tiny calls (tens of nanoseconds) would otherwise take hundreds of
  // thousands to fill the block's min_time.
  block.rule.max_samples = std::max<std::size_t>(block.rule.min_samples, std::min(kBlockSamples, options.rule.max_samples / min_blocks));
  block.rule.min_time = options.rule.min_time / k;
  block.rule.timeout = options.rule.timeout / k;
  block.rule.max_noise = std::numeric_limits<double>::max();  // judged across blocks (finite: it goes to the worker as JSON)
  TimingOptions first = block;
  first.warmup_time = options.warmup_time;
  block.warmup_time = 0;  // one warm-up call per block: the side has run moments before
  return {first, block};
}

// Slow calls: when a block's least work (a warm-up call and min_samples samples of the slowest
// side, as the first blocks measured it) would overrun its share of the budget, the later blocks
// take one sample each: a 90 ms call is then timed in seconds, not in a quarter of a minute.
void fit_slow_calls(TimingOptions& block, double slowest_median) {
  if (static_cast<double>(block.rule.min_samples + 1) * slowest_median > block.rule.timeout) {
    block.rule.min_samples = 1;
    block.rule.min_time = 0;
  }
}

// Floor-limited pairings: where the pairing's resolution floor is wider than the target (200 ns
// is 4.7% of a 4.3 us kernel), the interval stops at the floor whatever the blocks' size, and a
// block need only take enough samples for its median to sit inside the floor. The first pair's
// blocks say how many: the distribution-free 99% interval of a block's median (its samples'
// order statistics: cold samples of tiny kernels are lumpy, two clusters on the event clock's
// ticks, which a standard deviation overstates tenfold) narrows as 1/sqrt(n); the later blocks
// take what brings it within half the floor on the wider side, at least kFloorBlockSamples
// and at most what they took (the H100's 4.3 us blocks: 82-185 samples of 200). (The reported
// interval stays honest whatever the blocks' size: the pairs' sign-test interval, widened to the
// floor; noisier medians only take more pairs.)
constexpr std::size_t kFloorBlockSamples = 24;
void fit_floor_limited(TimingOptions& block, const Measurement& a, const Measurement& b, double floor, double target) {
  if (!(floor > target)) return;
  double needed = 0;
  for (const Measurement* m : {&a, &b}) {
    if (m->samples.size() < 16) return;  // too few to tell their spread
    const double half_width = median_half_width(m->samples);
    if (!std::isfinite(half_width)) return;
    needed = std::max(needed, static_cast<double>(m->samples.size()) * std::pow(half_width / (floor / 2), 2));
  }
  const auto n = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(needed)), kFloorBlockSamples, block.rule.max_samples);
  block.rule.max_samples = n;
  block.rule.min_samples = std::min(block.rule.min_samples, n);
}

// A pairing still too wide after its fewest pairs goes on toward the budget: from then on its
// blocks measure at least as long as a block costs to serve beyond its samples (the round trip,
// the buffers' return and check, the warm-up call: the median over the baseline's blocks so far,
// which no checked call joins), within a block's share of the budget. The budget is then spent
// measuring: a 4 ms CPU call served in 0.14 s blocks of 3 samples measured a fifth of it.
void fit_to_overhead(TimingOptions& block, const std::vector<double>& base_overheads, double block_share) {
  if (base_overheads.empty()) return;
  std::vector<double> v = base_overheads;
  std::sort(v.begin(), v.end());
  const double overhead = v[v.size() / 2];
  block.rule.min_time = std::max(block.rule.min_time, std::min(overhead, block_share));
  block.rule.min_samples = std::max<std::size_t>(block.rule.min_samples, 1);
}

// Why blocks stopped before the interval was narrow enough: the budget, or the most blocks.
std::string stop_note(StopReason why, double budget, std::size_t blocks, const char* what, double half_width, double target) {
  const std::string by = why == StopReason::timeout ? fmt::format("the {:g} s budget", budget) : std::string("the most blocks");
  return fmt::format("{} ended timing after {} {}: the {} interval is ±{:.2f}% (target ±{:g}%)", by, blocks, what,
                     std::string(what) == "pairs" ? "speedup's" : "median's", half_width * 100, target * 100);
}
}  // namespace

Expected<Measurement> measure_blocks(const std::function<Expected<Measurement>(const TimingOptions&)>& measure, const TimingOptions& options,
                                     const BlockStop& stop) {
  const std::size_t min_blocks = std::max<std::size_t>(stop.min_blocks, 1), max_blocks = std::max(stop.max_blocks, min_blocks);
  auto [first, block] = block_options(options, min_blocks);
  const auto start = Clock::now();
  std::vector<Measurement> taken;
  std::vector<double> medians;
  StopReason why = StopReason::max_samples;
  double half_width = std::numeric_limits<double>::infinity();
  for (std::size_t b = 0; b < max_blocks; ++b) {
    if (b == 1) fit_slow_calls(block, medians.back());
    auto m = measure(b == 0 ? first : block);
    if (!m) return m.error();
    medians.push_back(m->stats.median);
    taken.push_back(std::move(*m));
    if (taken.size() < min_blocks) continue;
    half_width = median_half_width(medians);
    if (half_width <= stop.max_half_width) {
      why = StopReason::converged;
      break;
    }
    if (std::chrono::duration<double>(Clock::now() - start).count() >= options.rule.timeout) {
      why = StopReason::timeout;
      break;
    }
  }
  Measurement out = pool_blocks(taken);
  out.stop = why;
  if (why != StopReason::converged) out.notes.push_back(stop_note(why, options.rule.timeout, taken.size(), "blocks", half_width, stop.max_half_width));
  return out;
}

Expected<PairedMeasurement> measure_paired(const std::function<Expected<Measurement>(bool baseline, const TimingOptions&)>& measure,
                                           const TimingOptions& options, const BlockStop& stop) {
  const std::size_t min_pairs = std::max<std::size_t>(stop.min_blocks, 1), max_pairs = std::max(stop.max_blocks, min_pairs);
  auto [first, block] = block_options(options, min_pairs);
  const auto start = Clock::now();

  std::vector<Measurement> impl_blocks, base_blocks;
  std::vector<double> impl_medians, base_medians, base_overheads;
  auto one = [&](bool baseline) -> Status {
    auto& blocks = baseline ? base_blocks : impl_blocks;
    const auto began = Clock::now();
    auto m = measure(baseline, blocks.empty() ? first : block);
    if (!m) return make_error((baseline ? "baseline: " : "") + m.error().message);
    if (baseline && !blocks.empty())  // the first block's long warm-up is no block's cost
      base_overheads.push_back(std::max(0.0, std::chrono::duration<double>(Clock::now() - began).count() - m->measured_time));
    (baseline ? base_medians : impl_medians).push_back(m->stats.median);
    blocks.push_back(std::move(*m));
    return Ok{};
  };
  bool fitted_to_overhead = false;
  StopReason why = StopReason::max_samples;
  std::optional<SpeedupInterval> speedup;
  double half_width = std::numeric_limits<double>::infinity();
  for (std::size_t p = 0; p < max_pairs; ++p) {
    if (p == 1) {
      fit_slow_calls(block, std::max(base_medians.back(), impl_medians.back()));
      fit_floor_limited(block, base_blocks.back(), impl_blocks.back(), resolution_of(base_medians.back(), impl_medians.back(), stop.floor),
                        stop.max_half_width);
    }
    const bool baseline_first = p % 2 == 0;  // B A, A B, ...: a steady drift falls on both sides
    if (auto s = one(baseline_first); !s) return s.error();
    if (auto s = one(!baseline_first); !s) return s.error();
    if (p + 1 < min_pairs) continue;
    speedup = paired_speedup(base_medians, impl_medians);
    if (!speedup) continue;
    half_width = speedup->half_width();
    const double floor = resolution_of(median_of(base_medians), median_of(impl_medians), stop.floor);
    if (half_width <= std::max(stop.max_half_width, floor)) {
      why = StopReason::converged;
      break;
    }
    // Each side has the budget: both together, twice it.
    if (std::chrono::duration<double>(Clock::now() - start).count() >= 2 * options.rule.timeout) {
      why = StopReason::timeout;
      break;
    }
    if (!fitted_to_overhead && !(floor > stop.max_half_width)) {  // a floor-limited pairing's blocks are sized by fit_floor_limited
      fit_to_overhead(block, base_overheads, options.rule.timeout / static_cast<double>(min_pairs));
      fitted_to_overhead = true;
    }
  }
  PairedMeasurement out;
  out.impl = pool_blocks(impl_blocks);
  out.baseline = pool_blocks(base_blocks);
  out.impl.stop = out.baseline.stop = why;
  if (why != StopReason::converged)
    out.impl.notes.push_back(stop_note(why, options.rule.timeout, impl_blocks.size(), "pairs", half_width, stop.max_half_width));
  out.speedup = paired_speedup(base_medians, impl_medians);
  return out;
}

}  // namespace bb
