#include "measure/measurement.hpp"

#include <chrono>

#include <fmt/format.h>

namespace bb {

const char* timing_mode_name(TimingMode m) { return m == TimingMode::hot ? "hot" : "cold"; }

double clock_mhz_between(uint64_t clock0, uint64_t ns0, uint64_t clock1, uint64_t ns1) {
  if (ns1 <= ns0 || clock1 <= clock0) return 0;
  const double ns = static_cast<double>(ns1 - ns0);
  if (ns < 2000) return 0;  // global timers tick as coarsely as 1 us: too short to read
  return static_cast<double>(clock1 - clock0) / ns * 1e3;
}

bool is_throttled(double clock_mhz, double max_clock_mhz, double threshold) {
  if (threshold <= 0 || clock_mhz <= 0 || max_clock_mhz <= 0) return false;
  return clock_mhz < threshold * max_clock_mhz;
}

namespace {
constexpr const char* kPlateauNote = "the noise stopped improving at ";
constexpr const char* kBudgetNote = " budget ended sampling at ";
}  // namespace

bool is_stop_note(const std::string& note) {
  return note.rfind(kPlateauNote, 0) == 0 || (note.rfind("the ", 0) == 0 && note.find(kBudgetNote) != std::string::npos);
}

Status sample_until_stopped(const std::function<Expected<Sample>()>& sample, const StopRule& rule, Measurement& m) {
  using Clock = std::chrono::steady_clock;
  const auto measuring = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - measuring).count(); };
  StopState state(rule);
  std::vector<Sample> kept, discarded;
  while (state.reason(elapsed()) == StopReason::running) {
    auto s = sample();
    if (!s) return s.error();
    if (s->throttled) {
      discarded.push_back(*s);
      // Discarded samples end the run only through the budget; reason() needs a kept one.
      if (elapsed() >= rule.timeout && kept.empty() && discarded.size() >= rule.min_samples) break;
      continue;
    }
    kept.push_back(*s);
    state.add(s->seconds, s->region_seconds > 0 ? s->region_seconds : s->seconds);
  }
  m.stop = kept.empty() ? StopReason::timeout : state.reason(elapsed());
  m.throttled = discarded.size();
  if (!discarded.empty()) {
    double lowest = discarded.front().clock_mhz;
    for (const auto& d : discarded) lowest = std::min(lowest, d.clock_mhz);
    m.min_clock_mhz = lowest;
  }
  if (kept.empty() && !discarded.empty()) {
    m.notes.push_back(fmt::format("every sample ({}) ran below the throttle threshold (lowest SM clock {:.0f} MHz): kept anyway",
                                  discarded.size(), m.min_clock_mhz));
    kept = std::move(discarded);
  } else if (!discarded.empty()) {
    m.notes.push_back(fmt::format("{} sample(s) discarded: SM clock throttled (lowest {:.0f} MHz)", discarded.size(), m.min_clock_mhz));
  }
  std::vector<double> seconds, host, clocks;
  m.measured_time = 0;
  for (const auto& k : kept) {
    seconds.push_back(k.seconds);
    host.push_back(k.host_seconds);
    if (k.clock_mhz > 0) clocks.push_back(k.clock_mhz);
    m.measured_time += k.region_seconds > 0 ? k.region_seconds : k.seconds;
  }
  m.samples = seconds;
  m.host_samples = host;
  m.stats = summarize(std::move(seconds));
  m.host = summarize(std::move(host));
  m.clock_mhz = clocks.empty() ? 0 : summarize(std::move(clocks)).median;
  if (m.stop == StopReason::noise_plateau)
    m.notes.push_back(fmt::format("{}{:.2f}% (target {:g}%)", kPlateauNote, m.stats.rel_stdev * 100, rule.max_noise * 100));
  if (m.stop == StopReason::timeout)
    m.notes.push_back(fmt::format("the {:g} s{}{:.2f}% noise (target {:g}%)", rule.timeout, kBudgetNote, m.stats.rel_stdev * 100,
                                  rule.max_noise * 100));
  return Ok{};
}

}  // namespace bb
