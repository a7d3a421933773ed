// Timing of a device call with the runtime's events: warm-up, then one event pair around each
// launch until the stop rule says enough. (Cache flushing and launch-overhead hiding are the
// measurement engine's next steps.)
#pragma once

#include <functional>

#include <backendbench/device_runtime.h>

#include "cpu_timer.hpp"

namespace bb {

// `launch` enqueues one call on `stream` and returns its return code (nonzero stops the
// measurement with an error, as does a device error).
Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     const TimingOptions& options);

}  // namespace bb
