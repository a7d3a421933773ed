#include "paired_timer.hpp"

#include <algorithm>
#include <cmath>

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

namespace {
// A block's share of the rule, and the first block's warm-up.
std::pair<TimingOptions, TimingOptions> block_options(const TimingOptions& options, std::size_t pairs) {
  const double k = static_cast<double>(pairs);
  TimingOptions block = options;
  block.rule.min_samples = std::max<std::size_t>(3, static_cast<std::size_t>(std::ceil(static_cast<double>(options.rule.min_samples) / k)));
  block.rule.max_samples = std::max<std::size_t>(block.rule.min_samples, options.rule.max_samples / pairs);
  block.rule.min_time = options.rule.min_time / k;
  block.rule.timeout = options.rule.timeout / k;
  TimingOptions first = block;
  first.warmup_time = options.warmup_time;
  block.warmup_time = 0;  // one warm-up call per block: the side has run moments before
  return {first, block};
}
}  // namespace

Expected<Measurement> measure_blocks(const std::function<Expected<Measurement>(const TimingOptions&)>& measure, const TimingOptions& options,
                                     std::size_t blocks) {
  blocks = std::max<std::size_t>(blocks, 1);
  auto [first, block] = block_options(options, blocks);
  std::vector<Measurement> taken;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (b == 1 && static_cast<double>(block.rule.min_samples + 1) * taken.back().stats.median > block.rule.timeout) {
      block.rule.min_samples = 1;  // slow calls: as measure_paired
      block.rule.min_time = 0;
    }
    auto m = measure(b == 0 ? first : block);
    if (!m) return m.error();
    taken.push_back(std::move(*m));
  }
  Measurement out = pool_blocks(taken);
  return out;
}

Expected<PairedMeasurement> measure_paired(const std::function<Expected<Measurement>(bool baseline, const TimingOptions&)>& measure,
                                           const TimingOptions& options, std::size_t pairs) {
  pairs = std::max<std::size_t>(pairs, 1);
  auto [first, block] = block_options(options, pairs);

  std::vector<Measurement> impl_blocks, base_blocks;
  std::vector<double> impl_medians, base_medians;
  auto one = [&](bool baseline) -> Status {
    auto& blocks = baseline ? base_blocks : impl_blocks;
    auto m = measure(baseline, blocks.empty() ? first : block);
    if (!m) return make_error((baseline ? "baseline: " : "") + m.error().message);
    (baseline ? base_medians : impl_medians).push_back(m->stats.median);
    blocks.push_back(std::move(*m));
    return Ok{};
  };
  for (std::size_t p = 0; p < pairs; ++p) {
    // Slow calls: when a block's least work (a warm-up call and min_samples samples of the
    // slower side, as the first pair measured them) would overrun its share of the budget, the
    // later blocks take one sample each. Sixteen single-sample pairs still give the interval;
    // a 90 ms call is then timed in seconds, not in a quarter of a minute.
    if (p == 1) {
      const double slowest = std::max(base_medians.back(), impl_medians.back());
      if (static_cast<double>(block.rule.min_samples + 1) * slowest > block.rule.timeout) {
        block.rule.min_samples = 1;
        block.rule.min_time = 0;
      }
    }
    const bool baseline_first = p % 2 == 0;
    if (auto s = one(baseline_first); !s) return s.error();
    if (auto s = one(!baseline_first); !s) return s.error();
  }
  PairedMeasurement out;
  out.impl = pool_blocks(impl_blocks);
  out.baseline = pool_blocks(base_blocks);
  out.speedup = paired_speedup(base_medians, impl_medians);
  return out;
}

}  // namespace bb
