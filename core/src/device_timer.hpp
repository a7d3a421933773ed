// Timing of a device call with the runtime's events, as nvbench times one.
//
// Cold (the default), per sample: a probe of the SM clock, a cache flush (a read of twice L2,
// which leaves L2 cold and clean), then a blocking kernel that holds the stream while the
// host enqueues start event, the call and stop event, then a second clock probe; the host
// releases the stream and waits. The launches run back to back, so host launch latency stays
// out of the region between the events. Hot: no flush; a sample is a batch of calls between
// the events, also queued behind the blocking kernel.
//
// The events add a fixed cost to what a profiler's kernel duration counts: the front end's
// processing of the launch and of the stop event, about 1.1 us on an H100 (docs/PERFORMANCE.md).
// (CUPTI's activity timestamps were tried instead: they read below Nsight Compute's duration
// for small kernels and slowed large ones by 7%.)
//
// Throttling: the two probes give the SM clock over the sample; a sample below the threshold
// is discarded and the timer waits the recovery delay before the next.
//
// A call that blocks the host (a synchronising copy, say) cannot be queued behind a blocking
// kernel: the kernel times out, the timer notices, and times without one from then on.
#pragma once

#include <functional>

#include <backendbench/device_runtime.h>

#include "measurement.hpp"

namespace bb {

// `launch` enqueues one call on `stream` and returns its return code (nonzero stops the
// measurement with an error, as does a device error). `max_clock_mhz`: the device's maximum
// SM clock, for the throttle check (0 turns it off).
Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     double max_clock_mhz, const TimingOptions& options);

}  // namespace bb
