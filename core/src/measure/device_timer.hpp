// Timing of a device call with the runtime's events, as nvbench times one.
//
// Cold (the default): samples are taken in batches of up to 8 behind one blocking kernel, so
// the host synchronises once per batch, and the next batch is enqueued while this one runs.
// A batch: a clock probe, the blocking kernel, then per sample an eviction, the start event,
// the call and the stop event; a second probe. The host releases the stream once the batch is
// queued, so the launches run back to back and host launch latency stays out of every region.
// The eviction leaves the call's memory cold in L2 and L2 clean:
//   - "flush": a kernel reads a buffer of twice L2 (dirty lines are written back on the way);
//   - "discard" (opt-in: --l2-discard): where the device can drop L2 lines without writing
//     them back (CUDA, sm_80 and later) and the call's buffers are at most 4x L2, each of
//     their lines is dropped (a few microseconds instead of ~40). The first sample of every
//     batch still gets the flush: memory outside the call's buffers (a plugin's own tables or
//     caches) is cold there only; should those samples be more than 5% slower, only they are
//     kept (and a note says why). Before the first batch the warm-up's flush has written every
//     earlier line back. Not the default: on an H100 the shipped kernels read 6-22% faster
//     after a discard than after the flush (the flush also evicts what the discard leaves:
//     address translations, among others), so the two are not the same cold.
// Hot: no eviction; a sample is a batch of calls between the events, also queued behind the
// blocking kernel.
//
// The events add a fixed cost to what a profiler's kernel duration counts (the front end's
// processing of the stop event after the start event; about 1.2 us on an H100). It is
// calibrated per process, device, batch size and eviction, with the samples' own structure
// and nothing between the events; results report it beside the median, and the median less
// it (docs/PERFORMANCE.md compares that with Nsight Compute). (Tried first: E1 - (E2 - E1),
// with one and two empty kernels between the events; it read 0.8 us above the gap to Nsight
// Compute.) (CUPTI's activity timestamps were tried instead: they read below Nsight Compute's
// duration for small kernels and slowed large ones by 7%.)
//
// Throttling: the two probes give the SM clock over the sample; a sample below the threshold
// is discarded and the timer waits the recovery delay before the next.
//
// A call that blocks the host (a synchronising copy, say) cannot be queued behind a blocking
// kernel: the kernel times out, the timer notices, and times without one from then on.
//
// Fresh inputs (ColdTarget::fresh): each sample's inputs are made just before it, when the host
// says so; samples are then one per synchronisation, the event pair calibrated for that.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <backendbench/device_runtime.h>

#include "measure/measurement.hpp"

namespace bb {

// `launch` enqueues one call on `stream` and returns its return code (nonzero stops the
// measurement with an error, as does a device error). `max_clock_mhz`: the device's maximum
// SM clock, for the throttle check (0 turns it off).
// What the cold eviction may drop: the call's buffers (whole allocations the host owns), and
// the device's L2 size (0: never discard).
struct ColdTarget {
  std::vector<bb_device_range> touched;
  int64_t l2_bytes = 0;
  // When given: queues the rewrite of the call's outputs (their poison) on the stream before
  // every sample and warm-up call, outside the timed region, so that no call finds the previous
  // one's answer in place. 0 or the runtime's error.
  std::function<int()> reset;
  // When given (cold only): before every timed sample, not the warm-up, the sample's fresh
  // inputs made on the device (fresh_inputs_protocol.hpp: the host paces each sample). Samples
  // are then taken one per synchronisation (a batch's inputs would all exist before its first
  // call). "" or why not, which ends the measurement.
  std::function<std::string()> fresh;
};

Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     double max_clock_mhz, const TimingOptions& options, const ColdTarget& target = {});

}  // namespace bb
