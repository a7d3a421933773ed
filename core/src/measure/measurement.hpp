// What every timer shares: the options, the measurement it produces, and the sampling loop
// that applies the stop rule and discards throttled samples. The CPU timer (cpu_timer.hpp) and
// the device timer (device_timer.hpp) differ only in how one sample is taken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "expected.hpp"
#include "measure/stats.hpp"

namespace bb {

// cold: caches flushed before every sample, one call per sample (the default);
// hot: no flush, calls batched back to back.
enum class TimingMode { cold, hot };
const char* timing_mode_name(TimingMode m);

struct TimingOptions {
  StopRule rule;
  TimingMode mode = TimingMode::cold;
  double warmup_time = 0.01;        // seconds of warm-up calls (at least one call)
  double min_sample_time = 1e-4;    // hot: a sample batches calls until it lasts this long
  bool blocking_kernel = true;      // devices: queue each sample's launches behind a blocking kernel
  bool l2_discard = false;          // devices, cold: drop the call's own L2 lines between samples
                                    // instead of flushing all of L2 (device_timer.hpp)
  double throttle_threshold = 0.75; // devices: a sample whose SM clock is below this fraction of
                                    // the maximum is discarded (0 turns the check off)
  double throttle_recovery_delay = 0.05;  // seconds to wait after a throttled sample
  // Devices: the host saw a block timed on this device moments ago (kDeviceWarmFor), so its
  // clocks are up: a process's first measurement needs no longer warm-up than the others.
  bool device_warm = false;
};

// One sample, as a timer takes it.
struct Sample {
  double seconds = 0;       // per call: the timed region (device: GPU time between events)
  double host_seconds = 0;  // per call: host wall time from the call to its completion (a batched or paced
                            // device sample's: with its share of the evictions and the inputs' making)
  double region_seconds = 0;  // the whole timed region (seconds x calls in the sample)
  double clock_mhz = 0;     // the SM clock over the sample; 0 when not read
  bool throttled = false;   // the clock was below the threshold: the sample is discarded
  bool flushed = true;      // cold: L2 was emptied by the full flush (not by discarding lines)
};

struct Measurement {
  TimingMode mode = TimingMode::cold;
  SampleStats stats;          // the kept samples, seconds per call (devices: GPU time)
  SampleStats host;           // host wall time per call, same samples
  StopReason stop = StopReason::running;
  std::size_t batch = 1;      // calls per sample
  std::size_t warmup_calls = 0;
  double wall_time = 0;       // seconds spent measuring, warm-up and flushes included
  double measured_time = 0;   // seconds inside timed regions (kept samples)
  std::size_t throttled = 0;  // samples discarded for a low SM clock
  double clock_mhz = 0;       // median SM clock of the kept samples (0: not read)
  double min_clock_mhz = 0;   // the lowest clock among the discarded samples
  bool blocking = false;      // launches were queued behind a blocking kernel
  // Cold on a device: how L2 was emptied before each sample ("flush": a read of twice L2;
  // "discard": the call's own lines dropped, a flush before the first sample of each batch),
  // how many samples shared one synchronisation, and the event pair's own cost as calibrated
  // for that batching (seconds; 0: not calibrated). device_timer.hpp says more.
  std::string eviction;
  std::size_t samples_per_sync = 1;
  double event_cost = 0;
  // Fresh inputs for every timed sample (fresh_inputs_protocol.hpp): the samples the host paced
  // (kept and discarded alike), and the seconds the worker spent waiting for each go and making
  // the inputs (device cases; outside every timed region).
  std::size_t paced = 0;
  double fresh_seconds = 0;
  std::vector<std::string> notes;  // what a reader of the result should know
  std::vector<double> samples, host_samples;  // the kept samples (seconds per call), in order
};

// Takes samples until `rule` says enough, each from `sample` (or an error that ends the
// measurement). Throttled samples count toward nothing but `throttled`; should every sample be
// throttled, they are kept, and a note says so. Fills everything but the timer's own fields.
Status sample_until_stopped(const std::function<Expected<Sample>()>& sample, const StopRule& rule, Measurement& m);

// Whether a note is the one sample_until_stopped adds for how sampling stopped (the budget, a
// noise plateau): said of each block of a paired measurement, it says nothing.
bool is_stop_note(const std::string& note);

// The SM clock between two probes, in MHz: cycles over nanoseconds. 0 when the pair makes no
// sense (the timer went backwards, a window too short to read).
double clock_mhz_between(uint64_t clock0, uint64_t ns0, uint64_t clock1, uint64_t ns1);
bool is_throttled(double clock_mhz, double max_clock_mhz, double threshold);

}  // namespace bb
