#include "cpu_timer.hpp"

#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace bb {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

Expected<Measurement> measure_cpu(const std::function<int()>& call, const TimingOptions& options) {
  Measurement m;
  const auto start = Clock::now();

  // Warm-up: at least one call, until warmup_time has passed; gives the per-call estimate.
  double per_call = 0;
  {
    const auto t0 = Clock::now();
    do {
      if (int rc = call(); rc != 0) return make_error(fmt::format("call returned {} during warm-up", rc));
      ++m.warmup_calls;
    } while (seconds_since(t0) < options.warmup_time);
    per_call = seconds_since(t0) / static_cast<double>(m.warmup_calls);
  }
  if (per_call > 0 && per_call < options.min_sample_time)
    m.batch = static_cast<std::size_t>(std::ceil(options.min_sample_time / per_call));

  auto sample = [&]() -> Expected<double> {
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < m.batch; ++i)
      if (int rc = call(); rc != 0) return make_error(fmt::format("call returned {} while timing", rc));
    return seconds_since(t0) / static_cast<double>(m.batch);
  };
  if (auto s = sample_until_stopped(sample, options.rule, m); !s) return s.error();
  m.wall_time = seconds_since(start);
  return m;
}

Status sample_until_stopped(const std::function<Expected<double>()>& sample, const StopRule& rule, Measurement& m) {
  StopState state(rule);
  std::vector<double> samples;
  const auto measuring = Clock::now();
  while (state.reason(seconds_since(measuring)) == StopReason::running) {
    auto s = sample();
    if (!s) return s.error();
    samples.push_back(*s);
    state.add(*s);
  }
  m.stop = state.reason(seconds_since(measuring));
  m.stats = summarize(std::move(samples));
  return Ok{};
}

}  // namespace bb
