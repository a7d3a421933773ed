#include "device_timer.hpp"

#include <chrono>

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
}  // namespace

Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     const TimingOptions& options) {
  Measurement m;
  const auto begin = Clock::now();
  EventPair ev(rt);
  if (ev.error) return make_error("creating events: " + describe(rt, ev.error));

  auto one = [&](float* ms) -> Expected<Ok> {
    if (int e = rt.event_record(ev.start, stream); e) return make_error("event: " + describe(rt, e));
    if (int rc = launch(); rc != 0) return make_error(fmt::format("call returned {}", rc));
    if (int e = rt.event_record(ev.stop, stream); e) return make_error("event: " + describe(rt, e));
    if (int e = rt.stream_synchronize(stream); e) return make_error(describe(rt, e));
    if (int e = rt.get_last_error(); e) return make_error(describe(rt, e));
    if (int e = rt.event_elapsed_ms(ms, ev.start, ev.stop); e) return make_error("elapsed: " + describe(rt, e));
    return Ok{};
  };

  {
    const auto t0 = Clock::now();
    do {
      float ms = 0;
      if (auto s = one(&ms); !s) return make_error("during warm-up: " + s.error().message);
      ++m.warmup_calls;
    } while (seconds_since(t0) < options.warmup_time);
  }

  auto sample = [&]() -> Expected<double> {
    float ms = 0;
    if (auto s = one(&ms); !s) return s.error();
    return ms * 1e-3;
  };
  if (auto s = sample_until_stopped(sample, options.rule, m); !s) return s.error();
  m.wall_time = seconds_since(begin);
  return m;
}

}  // namespace bb
