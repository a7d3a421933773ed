#include "measure/cpu_timer.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

namespace bb {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

Expected<Measurement> measure_cpu(const std::function<int()>& call, const std::function<void()>& flush, const TimingOptions& options,
                                  const std::function<void()>& reset, const std::function<bool()>& fresh) {
  Measurement m;
  m.mode = options.mode;
  const bool cold = options.mode == TimingMode::cold;
  const auto start = Clock::now();

  // Warm-up: at least one call, until warmup_time has passed; gives the per-call estimate.
  double per_call = 0;
  {
    double spent = 0;
    do {
      if (reset) reset();
      const auto t0 = Clock::now();
      const int rc = call();
      spent += seconds_since(t0);
      if (rc != 0) return make_error(fmt::format("call returned {} during warm-up", rc));
      ++m.warmup_calls;
    } while (spent < options.warmup_time);
    per_call = spent / static_cast<double>(m.warmup_calls);
  }
  if (!cold && per_call > 0 && per_call < options.min_sample_time)
    m.batch = static_cast<std::size_t>(std::ceil(options.min_sample_time / per_call));

  auto sample = [&]() -> Expected<Sample> {
    if (fresh && !fresh()) return make_error("the sample's fresh inputs did not come");
    if (reset) reset();
    if (cold && flush) flush();
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < m.batch; ++i)
      if (int rc = call(); rc != 0) return make_error(fmt::format("call returned {} while timing", rc));
    Sample s;
    s.region_seconds = seconds_since(t0);
    s.seconds = s.host_seconds = s.region_seconds / static_cast<double>(m.batch);
    return s;
  };
  if (auto s = sample_until_stopped(sample, options.rule, m); !s) return s.error();
  m.wall_time = seconds_since(start);
  return m;
}

}  // namespace bb
