// Times a baseline and an implementation in alternating blocks (paired.hpp says why): pair k
// is one block of each, in the order B A, A B, B A, ... so that a steady drift within a pair
// falls on both sides alike. Each side's blocks are pooled into one measurement.
#pragma once

#include <functional>
#include <optional>

#include "measurement.hpp"
#include "paired.hpp"

namespace bb {

struct PairedMeasurement {
  Measurement impl, baseline;             // each side's blocks pooled
  std::optional<SpeedupInterval> speedup;  // from the blocks' medians
};

// `measure(baseline, options)` takes one block of one side. Each side gets the rule's budget
// (min_time, timeout, samples) spread over `pairs` blocks, and the configured warm-up before its
// first block only. A block's error ends the measurement; a baseline's error says "baseline: ".
Expected<PairedMeasurement> measure_paired(const std::function<Expected<Measurement>(bool baseline, const TimingOptions&)>& measure,
                                           const TimingOptions& options, std::size_t pairs = kPairedBlocks);

// One side alone in `blocks` blocks, the budget spread over them as measure_paired does: the
// host checks each block's last call and places checked calls between blocks.
Expected<Measurement> measure_blocks(const std::function<Expected<Measurement>(const TimingOptions&)>& measure, const TimingOptions& options,
                                     std::size_t blocks);

// The blocks of one side as one measurement: samples concatenated, times and counts summed.
Measurement pool_blocks(const std::vector<Measurement>& blocks);

}  // namespace bb
