#include "measure/paired.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bb {

MedianRank median_interval_rank(std::size_t n, double confidence) {
  MedianRank best{1, 0};
  if (n == 0) return best;
  // P(Binomial(n, 1/2) <= k) for k = 0.. by the recurrence C(n, k+1) = C(n, k) (n-k)/(k+1),
  // in logs so that large n does not overflow.
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double log_c = 0;    // log C(n, 0)
  double below = 0;    // P(X < j)
  for (std::size_t j = 1; 2 * j <= n + 1; ++j) {
    below += std::exp(log_c + log_half_n);  // adds P(X = j - 1)
    const double coverage = 1 - 2 * below;
    if (j == 1) best = {1, coverage};
    else if (coverage >= confidence) best = {j, coverage};
    else break;
    log_c += std::log(static_cast<double>(n - (j - 1))) - std::log(static_cast<double>(j));
  }
  return best;
}

std::optional<SpeedupInterval> paired_speedup(const std::vector<double>& baseline_medians, const std::vector<double>& impl_medians,
                                              double confidence) {
  std::vector<double> d;
  const std::size_t n = std::min(baseline_medians.size(), impl_medians.size());
  for (std::size_t k = 0; k < n; ++k) {
    const double a = baseline_medians[k], b = impl_medians[k];
    if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) continue;
    d.push_back(std::log(a / b));
  }
  if (d.empty()) return std::nullopt;
  std::sort(d.begin(), d.end());
  const std::size_t m = d.size();
  const double median = m % 2 ? d[m / 2] : 0.5 * (d[m / 2 - 1] + d[m / 2]);
  const MedianRank r = median_interval_rank(m, confidence);
  SpeedupInterval s;
  s.speedup = std::exp(median);
  s.low = std::exp(d[r.j - 1]);
  s.high = std::exp(d[m - r.j]);
  s.confidence = r.coverage;
  s.pairs = m;
  return s;
}

double SpeedupInterval::half_width() const {
  if (!(speedup > 0) || !(low > 0)) return std::numeric_limits<double>::infinity();
  return std::max(high / speedup - 1, 1 - low / speedup);
}

double resolution_of(double baseline_median, double impl_median, const ResolutionFloor& floor) {
  const double faster = std::min(baseline_median, impl_median);
  double f = floor.relative;
  if (faster > 0 && std::isfinite(faster)) f = std::max(f, floor.seconds / faster);
  return f > 0 && std::isfinite(f) ? f : 0;
}

double median_half_width(std::vector<double> values, double confidence) {
  std::erase_if(values, [](double v) { return !(v > 0) || !std::isfinite(v); });
  if (values.size() < 2) return std::numeric_limits<double>::infinity();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  const auto rank = median_interval_rank(n, confidence);
  return std::max(values[n - rank.j] / median - 1, 1 - values[rank.j - 1] / median);
}

SpeedupInterval widen_to_resolution(SpeedupInterval s, double baseline_median, double impl_median, const ResolutionFloor& floor) {
  const double f = resolution_of(baseline_median, impl_median, floor);
  if (!(f > 0)) return s;
  s.low /= 1 + f;
  s.high *= 1 + f;
  s.resolution = f;
  return s;
}

double normal_quantile_two_sided(double confidence) {
  // Solves erf(z / sqrt 2) = confidence by bisection: plenty for a reporting constant.
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < confidence ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::optional<SpeedupInterval> geomean_interval(const std::vector<SpeedupInterval>& cases, double confidence) {
  if (cases.empty()) return std::nullopt;
  double sum = 0, var = 0, floors = 0;
  for (const auto& c : cases) {
    sum += std::log(c.speedup);
    const double z = normal_quantile_two_sided(c.confidence > 0 && c.confidence < 1 ? c.confidence : confidence);
    const double floor = c.resolution > 0 && std::isfinite(c.resolution) ? std::log1p(c.resolution) : 0.0;
    const double half = std::max(std::log(c.high) - std::log(c.speedup), std::log(c.speedup) - std::log(c.low));
    const double se = std::max(0.0, half - floor) / z;
    var += se * se;
    floors += floor;
  }
  const double n = static_cast<double>(cases.size());
  const double mean = sum / n;
  const double half = normal_quantile_two_sided(confidence) * std::sqrt(var) / n + floors / n;
  SpeedupInterval g;
  g.speedup = std::exp(mean);
  g.low = std::exp(mean - half);
  g.high = std::exp(mean + half);
  g.confidence = confidence;
  g.pairs = cases.size();
  return g;
}

}  // namespace bb
