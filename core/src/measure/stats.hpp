// Summary statistics of timing samples, and the adaptive stopping rule.
#pragma once

#include <cstddef>
#include <vector>

namespace bb {

struct SampleStats {
  std::size_t samples = 0;
  double min = 0, max = 0, mean = 0, median = 0;
  double q1 = 0, q3 = 0, iqr = 0;
  double stdev = 0;      // sample standard deviation (n - 1)
  double rel_stdev = 0;  // stdev / mean
};

// Quantiles by linear interpolation between order statistics (numpy's default).
double quantile(const std::vector<double>& sorted, double q);
// The median of `v` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> v);
SampleStats summarize(std::vector<double> samples);

// When to stop sampling: once at least min_samples samples and min_time seconds of them are
// taken and the relative standard deviation is at most max_noise; or, as nvbench does, once
// the noise has stopped improving (a kernel whose noise sits above max_noise, a few percent
// for a microsecond kernel, gains nothing from more samples); or when max_samples or the time
// budget is reached, whichever comes first.
struct StopRule {
  std::size_t min_samples = 10;
  std::size_t max_samples = 100000;
  double min_time = 0.05;   // seconds of measured time
  double max_noise = 0.01;  // relative standard deviation (0.01 = 1%)
  double timeout = 2.0;     // seconds of wall time spent measuring (the budget)
};

enum class StopReason { running, converged, noise_plateau, max_samples, timeout };
const char* stop_reason_name(StopReason r);

// Incremental: add() each sample; reason() tells whether to stop.
class StopState {
 public:
  explicit StopState(StopRule rule) : rule_(rule) {}
  // `region_seconds`: the sample's whole timed region (several calls when batched), which is
  // what min_time counts; by default the sample itself.
  void add(double sample_seconds, double region_seconds = -1);
  StopReason reason(double elapsed_wall_seconds) const;
  std::size_t count() const { return n_; }
  double measured_time() const { return measured_; }
  double rel_stdev() const;

  // The noise is checked every kPlateauEvery samples; a plateau is kPlateauChecks checks in a
  // row within kPlateauRange of each other (relative).
  static constexpr std::size_t kPlateauEvery = 50;
  static constexpr std::size_t kPlateauChecks = 5;
  static constexpr double kPlateauRange = 0.01;

 private:
  bool plateaued() const;
  StopRule rule_;
  std::size_t n_ = 0;
  double measured_ = 0, mean_ = 0, m2_ = 0;  // Welford
  std::vector<double> noise_history_;
};

}  // namespace bb
