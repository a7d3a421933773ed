// Timing of a CPU call: warm-up, then samples until the stop rule says enough. Cold (the
// default): the call's buffers are evicted from every cache level before each sample, and a
// sample is one call. Hot: no eviction, calls batched until a sample lasts min_sample_time.
#pragma once

#include <chrono>
#include <functional>

#include "measure/measurement.hpp"

namespace bb {

// Seconds on the steady clock since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `call` returns 0 on success; a nonzero return stops the measurement with an error. `flush`
// (cold mode) evicts the call's data from the caches; `reset` (when given) rewrites the call's
// outputs before every sample and every warm-up call, so that no call finds the previous one's
// answer in place. Both run outside the timed region, reset first. `fresh` (when given) runs
// before them, before every timed sample (not the warm-up): the sample's inputs written afresh
// (fresh_inputs_protocol.hpp); false stops the measurement with an error.
Expected<Measurement> measure_cpu(const std::function<int()>& call, const std::function<void()>& flush, const TimingOptions& options,
                                  const std::function<void()>& reset = {}, const std::function<bool()>& fresh = {});

}  // namespace bb
