// Times a baseline and an implementation in alternating blocks (paired.hpp says why): pair k
// is one block of each, in the order B A, A B, B A, ... so that a steady drift within a pair
// falls on both sides alike. Each side's blocks are pooled into one measurement.
#pragma once

#include <functional>
#include <optional>

#include "measure/measurement.hpp"
#include "measure/paired.hpp"

namespace bb {

struct PairedMeasurement {
  Measurement impl, baseline;             // each side's blocks pooled; impl.stop says why pairing stopped
  std::optional<SpeedupInterval> speedup;  // from the blocks' medians
};

// When blocks stop: the stop is on what is reported. A paired measurement stops once its
// speedup's interval is within ±max_half_width (or within the pairing's resolution floor where
// that is wider: more pairs cannot narrow what the reported interval adds), an unpaired one once
// the interval of its blocks' median is; never before min_blocks, never after max_blocks, and
// never past the budget (the rule's timeout, for each side), which a note then says.
struct BlockStop {
  std::size_t min_blocks = kMinPairs;
  std::size_t max_blocks = kMaxPairs;
  double max_half_width = 0.01;  // relative: the rule's max_noise by default
  ResolutionFloor floor{};       // pairings: kProcessFloor
};
// The most samples one block takes (below the rule's max_samples over min_blocks): 200 makes tiny
// device kernels' blocks 2.5x cheaper than 1000. The CPU self-speedup misses once blamed on it
// were per-process biases (cores, page offsets, placement: docs/PERFORMANCE.md, "Self-speedup
// across processes on the CPU"), seen with 1000 as well; with those removed, 200 held 1.00 in
// 60 of 60 cases on the loaded 2-core VM.
inline constexpr std::size_t kBlockSamples = 200;
// The stop for `options`: its max_noise as the half-width.
BlockStop block_stop(const TimingOptions& options);

// `measure(baseline, options)` takes one block of one side. A block is a fixed share of the rule
// (min_time and min_samples over min_blocks, then it stops: the noise is judged across blocks, not
// within one; kBlockSamples and its share of the timeout caps), the configured warm-up before each side's first block only. A
// block's error ends the measurement; a baseline's error says "baseline: ".
Expected<PairedMeasurement> measure_paired(const std::function<Expected<Measurement>(bool baseline, const TimingOptions&)>& measure,
                                           const TimingOptions& options, const BlockStop& stop);

// One side alone, in blocks as measure_paired takes them: the host checks each block's last call
// and places checked calls between blocks.
Expected<Measurement> measure_blocks(const std::function<Expected<Measurement>(const TimingOptions&)>& measure, const TimingOptions& options,
                                     const BlockStop& stop);

// The blocks of one side as one measurement: samples concatenated, times and counts summed.
Measurement pool_blocks(const std::vector<Measurement>& blocks);

}  // namespace bb
