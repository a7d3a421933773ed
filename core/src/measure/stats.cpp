#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>

namespace bb {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

SampleStats summarize(std::vector<double> samples) {
  SampleStats s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  s.iqr = s.q3 - s.q1;
  if (samples.size() > 1) {
    double ss = 0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(samples.size() - 1));
  }
  s.rel_stdev = s.mean > 0 ? s.stdev / s.mean : 0.0;
  return s;
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::running: return "running";
    case StopReason::converged: return "converged";
    case StopReason::noise_plateau: return "noise_plateau";
    case StopReason::max_samples: return "max_samples";
    case StopReason::timeout: return "timeout";
  }
  return "?";
}

void StopState::add(double x, double region) {
  ++n_;
  measured_ += region >= 0 ? region : x;
  const double d = x - mean_;
  mean_ += d / static_cast<double>(n_);
  m2_ += d * (x - mean_);
  if (n_ % kPlateauEvery == 0) noise_history_.push_back(rel_stdev());
}

bool StopState::plateaued() const {
  if (noise_history_.size() < kPlateauChecks) return false;
  const auto first = noise_history_.end() - static_cast<std::ptrdiff_t>(kPlateauChecks);
  const auto [lo, hi] = std::minmax_element(first, noise_history_.end());
  return *hi > 0 && (*hi - *lo) <= kPlateauRange * *hi;
}

double StopState::rel_stdev() const {
  if (n_ < 2 || mean_ <= 0) return 0.0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1)) / mean_;
}

StopReason StopState::reason(double elapsed) const {
  if (n_ >= rule_.min_samples && measured_ >= rule_.min_time) {
    if (rel_stdev() <= rule_.max_noise) return StopReason::converged;
    if (plateaued()) return StopReason::noise_plateau;
  }
  if (n_ >= rule_.max_samples) return StopReason::max_samples;
  if (elapsed >= rule_.timeout && n_ >= std::min<std::size_t>(rule_.min_samples, 3)) return StopReason::timeout;
  if (elapsed >= 4 * rule_.timeout) return StopReason::timeout;  // a call slower than the budget
  return StopReason::running;
}

}  // namespace bb
