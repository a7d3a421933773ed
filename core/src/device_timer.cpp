#include "device_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

namespace bb {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Two events, destroyed on every path.
struct EventPair {
  const bb_device_runtime& rt;
  void* start = nullptr;
  void* stop = nullptr;
  int error = 0;
  explicit EventPair(const bb_device_runtime& r) : rt(r) {
    error = rt.event_create(&start);
    if (!error) error = rt.event_create(&stop);
  }
  ~EventPair() {
    if (start) rt.event_destroy(start);
    if (stop) rt.event_destroy(stop);
  }
};

std::string describe(const bb_device_runtime& rt, int e) {
  const char* s = rt.error_string(e);
  return fmt::format("{} error {} ({})", rt.name, e, s ? s : "?");
}

// How long a blocking kernel waits for its release before giving up: the host enqueues a
// sample's launches well within this unless a launch itself blocks.
constexpr double kProbeBlockMs = 200;   // the first blocked call (finds calls that block the host)
constexpr double kSampleBlockMs = 2000;
// Launches queued behind one blocking kernel, at most: the launch queue is finite, and a host
// that fills it waits for the blocked stream.
constexpr std::size_t kMaxBlockedBatch = 200;
// An idle GPU's clocks (memory's too, which no probe reads) take a while to come up: the
// first measurement in a process warms up for at least this long. (It does not cure the slow
// first case of a baseline worker seen on an H100: docs/PERFORMANCE.md, stability.)
constexpr double kFirstWarmup = 0.3;
bool g_device_warm = false;
}  // namespace

Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     double max_clock_mhz, const TimingOptions& options) {
  Measurement m;
  m.mode = options.mode;
  const bool cold = options.mode == TimingMode::cold;
  const auto begin = Clock::now();
  EventPair ev(rt);
  if (ev.error) return make_error("creating events: " + describe(rt, ev.error));
  bool blocking = options.blocking_kernel;

  // One timed region of `calls` launches; per-call GPU and host seconds, and the SM clock.
  auto region = [&](std::size_t calls, bool flush, double block_ms) -> Expected<Sample> {
    const bool probes = max_clock_mhz > 0 && options.throttle_threshold > 0;
    if (probes)
      if (int e = rt.clock_probe(stream, 0); e) return make_error("clock probe: " + describe(rt, e));
    if (flush) {
      if (int e = rt.flush_cache(stream); e) return make_error("cache flush: " + describe(rt, e));
      // Wait for it: the host time below is then the call's alone, flush excluded.
      if (int e = rt.stream_synchronize(stream); e) return make_error("cache flush: " + describe(rt, e));
    }
    if (block_ms > 0)
      if (int e = rt.block_stream(stream, block_ms); e) return make_error("blocking kernel: " + describe(rt, e));
    if (int e = rt.event_record(ev.start, stream); e) return make_error("event: " + describe(rt, e));
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < calls; ++i)
      if (int rc = launch(); rc != 0) {
        rt.release_stream();
        return make_error(fmt::format("call returned {}", rc));
      }
    if (int e = rt.event_record(ev.stop, stream); e) return rt.release_stream(), make_error("event: " + describe(rt, e));
    if (probes)
      if (int e = rt.clock_probe(stream, 1); e) return rt.release_stream(), make_error("clock probe: " + describe(rt, e));
    if (block_ms > 0) rt.release_stream();
    if (int e = rt.stream_synchronize(stream); e) return make_error(describe(rt, e));
    const double host = seconds_since(t0);
    if (int e = rt.get_last_error(); e) return make_error(describe(rt, e));
    float ms = 0;
    if (int e = rt.event_elapsed_ms(&ms, ev.start, ev.stop); e) return make_error("elapsed: " + describe(rt, e));
    Sample s;
    s.region_seconds = ms * 1e-3;
    s.seconds = s.region_seconds / static_cast<double>(calls);
    s.host_seconds = host / static_cast<double>(calls);
    if (block_ms > 0) {
      int timed_out = 0;
      rt.blocking_timed_out(&timed_out);
      if (timed_out) s.seconds = -1;  // the launches were not all queued in time: invalid
    }
    if (probes) {
      bb_clock_sample p[2]{};
      if (rt.read_clock_probes(p, 2) == 0) s.clock_mhz = clock_mhz_between(p[0].sm_clock, p[0].global_ns, p[1].sm_clock, p[1].global_ns);
      s.throttled = is_throttled(s.clock_mhz, max_clock_mhz, options.throttle_threshold);
    }
    return s;
  };

  // Warm-up. The first call runs behind a blocking kernel with a short timeout: a call that
  // blocks the host shows itself here, and is then timed without one.
  double per_call = 0;
  {
    const auto t0 = Clock::now();
    std::size_t timed = 0;
    do {
      const double block_ms = blocking ? (m.warmup_calls == 0 ? kProbeBlockMs : kSampleBlockMs) : 0;
      auto s = region(1, cold, block_ms);
      if (!s) return make_error("during warm-up: " + s.error().message);
      ++m.warmup_calls;
      if (s->seconds < 0) {
        blocking = false;
        m.notes.push_back("the call blocks the host (a synchronising call?): timed without the blocking kernel, launch latency included");
        continue;
      }
      per_call += s->seconds;
      ++timed;
    } while (seconds_since(t0) < (g_device_warm ? options.warmup_time : std::max(options.warmup_time, kFirstWarmup)) || timed == 0);
    g_device_warm = true;
    per_call /= static_cast<double>(timed);
  }
  if (!cold && per_call > 0 && per_call < options.min_sample_time) {
    m.batch = static_cast<std::size_t>(std::ceil(options.min_sample_time / per_call));
    if (blocking) m.batch = std::min(m.batch, kMaxBlockedBatch);
  }

  auto sample = [&]() -> Expected<Sample> {
    for (;;) {
      auto s = region(m.batch, cold, blocking ? kSampleBlockMs : 0);
      if (!s) return s;
      if (s->seconds < 0) {  // the blocking kernel gave up: drop the sample, stop blocking
        blocking = false;
        m.notes.push_back("a blocking kernel timed out while timing: the rest was timed without one");
        continue;
      }
      if (s->throttled && options.throttle_recovery_delay > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(options.throttle_recovery_delay));
      return s;
    }
  };
  if (auto s = sample_until_stopped(sample, options.rule, m); !s) return s.error();
  m.blocking = blocking;
  m.wall_time = seconds_since(begin);
  return m;
}

}  // namespace bb
