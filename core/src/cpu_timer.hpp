// Timing of a CPU call: warm-up, then batched samples until the stop rule says enough.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "expected.hpp"
#include "stats.hpp"

namespace bb {

struct TimingOptions {
  StopRule rule;
  double warmup_time = 0.01;       // seconds of warm-up calls (at least one call)
  double min_sample_time = 1e-4;   // a sample batches calls until it lasts this long
};

struct Measurement {
  SampleStats stats;          // per call, seconds
  StopReason stop = StopReason::running;
  std::size_t batch = 1;      // calls per sample
  std::size_t warmup_calls = 0;
  double wall_time = 0;       // seconds spent measuring, warm-up included
};

// Takes samples until `rule` says enough, each from `sample` (one sample's seconds, or an error
// that ends the measurement); fills m.stats and m.stop. Both timers share it.
Status sample_until_stopped(const std::function<Expected<double>()>& sample, const StopRule& rule, Measurement& m);

// `call` returns 0 on success; a nonzero return stops the measurement with an error.
Expected<Measurement> measure_cpu(const std::function<int()>& call, const TimingOptions& options);

}  // namespace bb
