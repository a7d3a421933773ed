// Speedup as a paired measurement: the baseline and the implementation timed in the same
// worker, on the same device, in alternating blocks (docs/RUNNING.md, "Speedups").
//
// Block k of the baseline and block k of the implementation are one pair; its log ratio
// d_k = ln(baseline median_k / implementation median_k) is what drift, clock ramps and memory
// placement cancel out of, since both blocks of a pair see them alike. The speedup is
// exp(median of d_k); its interval is the distribution-free confidence interval of that median
// from the order statistics of d (no normality assumed: a binomial count of the pairs on each
// side of the true median). A speedup whose interval contains 1.0 is "no significant
// difference".
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace bb {

// The pairs a timed test takes, and the confidence of its interval. Pairing stops once the
// interval is narrow enough (paired_timer.hpp), after kMinPairs at least (8 pairs: the interval is
// their whole range, 99.2% coverage) and kMaxPairs at most; with 16 pairs, the interval from the
// 3rd lowest to the 3rd highest ratio covers the median with 99.6% confidence.
inline constexpr std::size_t kMinPairs = 8;
inline constexpr std::size_t kMaxPairs = 64;
inline constexpr double kSpeedupConfidence = 0.99;

struct SpeedupInterval {
  double speedup = 1;     // baseline / implementation: > 1 is faster than the baseline
  double low = 1, high = 1;
  double confidence = 0;  // the interval's actual coverage (order statistics give discrete levels)
  std::size_t pairs = 0;
  // The relative floor the interval was widened by (widen_to_resolution): a bias of two
  // processes that more blocks, or more cases, do not average away. 0: none.
  double resolution = 0;
  // The interval lies wholly above or below 1.0.
  bool significant() const { return low > 1.0 || high < 1.0; }
  // The interval's larger distance from the speedup, relative to it (0.01: within ±1%).
  double half_width() const;
};

// The order-statistic interval [x_(j), x_(n+1-j)] (1-based) for the median of n samples with
// the largest j whose coverage 1 - 2 P(Binomial(n, 1/2) < j) is at least `confidence`; j = 1
// (the whole range) when n is too small for it. Returns j and the coverage.
struct MedianRank {
  std::size_t j = 1;
  double coverage = 0;
};
MedianRank median_interval_rank(std::size_t n, double confidence);

// The paired speedup from the blocks' medians (seconds per call), pair k being
// baseline[k] and impl[k]. Pairs with a non-positive or non-finite median are left out;
// nullopt when none is left.
std::optional<SpeedupInterval> paired_speedup(const std::vector<double>& baseline_medians, const std::vector<double>& impl_medians,
                                              double confidence = kSpeedupConfidence);

// What separate processes cannot resolve: the two sides of a pairing run in two workers (two
// contexts, two sets of buffers, placed in memory each its own way), and an implementation timed
// against a copy of itself read up to 130 ns apart on a 4.5 us kernel and 0.18% on a 190 us one,
// steady over all 16 blocks (H100); on the CPU, both sides pinned to one core (cpu_pin.hpp),
// their buffers at the same offsets within a page (host_buffer.hpp) and placed afresh before
// every block (request_server.cpp), up to 2.2% (about 140 ns) apart on a 6 us call over the second
// half of a pairing (2-core VM; docs/PERFORMANCE.md "Self-speedup across processes"). More
// blocks do not average that away, so an interval is widened by the larger of `seconds` over
// the faster side's median and `relative`.
struct ResolutionFloor {
  double seconds = 0;
  double relative = 0;
};
inline constexpr ResolutionFloor kProcessFloor{200e-9, 0.003};
SpeedupInterval widen_to_resolution(SpeedupInterval s, double baseline_median, double impl_median, const ResolutionFloor& floor);
// The relative width that floor adds for those medians (0 for no floor).
double resolution_of(double baseline_median, double impl_median, const ResolutionFloor& floor);

// The distribution-free interval of the median of `values` at `confidence`, as the relative
// half-width around that median (0.01: within ±1%); infinity for fewer than 2 values.
double median_half_width(std::vector<double> values, double confidence = kSpeedupConfidence);

// The geometric mean of several cases' speedups, with an interval: on the log scale each case's
// half-width, less its `resolution` (the processes' floor), is taken as z standard errors (z of
// the case's own confidence), the errors of independent cases add in quadrature, and the mean's
// interval is z standard errors of the mean either side, widened by the mean of the cases'
// floors: a floor is a bias each case may carry alike, so it does not shrink with more cases.
// nullopt for no cases.
std::optional<SpeedupInterval> geomean_interval(const std::vector<SpeedupInterval>& cases, double confidence = kSpeedupConfidence);

// The two-sided standard normal quantile for a confidence level: 0.95 -> 1.96.
double normal_quantile_two_sided(double confidence);

}  // namespace bb
