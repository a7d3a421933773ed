#include "measure/clock_audit.hpp"

#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace bb {

namespace {
std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }
}  // namespace

std::optional<std::string> audit_clock(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base,
                                       const AuditOptions& options) {
  const double slack = options.min_excess_per_call > 0 ? options.min_excess_per_call : options.device ? 200e-6 : 5e-6;
  const std::size_t pairs = std::min(impl.size(), base.size());
  std::vector<double> excess, true_time, reported, share;
  for (std::size_t k = 1; k < pairs; ++k) {
    const BlockRecord& i = impl[k];
    const BlockRecord& b = base[k];
    const double nb = static_cast<double>(b.m.samples.size()) * static_cast<double>(b.m.batch);
    const double wb = static_cast<double>(b.m.warmup_calls);
    if (nb <= 0 || b.m.wall_time <= 0) continue;
    const double fixed = std::max(0.0, b.host_seconds - b.foreign_wait - b.m.wall_time);
    const double overhead = std::max(0.0, (b.m.wall_time - b.m.measured_time - wb * b.m.stats.median) / nb);
    const double n = static_cast<double>(i.m.samples.size()) * static_cast<double>(i.m.batch);
    const double w = static_cast<double>(i.m.warmup_calls);
    if (n <= 0) continue;
    const double host = i.host_seconds - i.foreign_wait;
    const double room = host - fixed;
    const double t = (room - n * overhead) / (n + w);
    true_time.push_back(t);
    reported.push_back(i.m.stats.median);
    excess.push_back(t - i.m.stats.median);
    share.push_back((t - i.m.stats.median) * (n + w) / std::max(host, 1e-12));
  }
  if (excess.size() < 3) return std::nullopt;
  const double e = median_of(excess), t = median_of(true_time), r = median_of(reported), s = median_of(share);
  if (e > std::max(r, slack) && s > 0.25)
    return fmt::format("the host's clock says its calls took about {} each, but its worker reported {} (median over {} blocks; {:.0f}% "
                       "of each block's time is not accounted for, against the baseline's blocks in another process): a forged clock, "
                       "or work done outside the timed region",
                       us(t), us(r), excess.size(), s * 100);
  return std::nullopt;
}

namespace {
// The lower quartile of a block's paced spans: one sample in four may have been delayed.
double low_quantile(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 4];
}
}  // namespace

std::optional<std::string> audit_paced(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base,
                                       const AuditOptions& options) {
  const std::size_t pairs = std::min(impl.size(), base.size());
  std::vector<double> round_trip, impl_span, impl_median;
  for (std::size_t k = 1; k < pairs; ++k) {
    const BlockRecord& i = impl[k];
    const BlockRecord& b = base[k];
    // A block of long calls may hold one or two samples: their spans are the quantile then.
    if (i.paced.empty() || b.paced.empty() || i.m.samples.empty() || b.m.samples.empty()) continue;
    round_trip.push_back(low_quantile(b.paced) - b.m.stats.median);
    impl_span.push_back(low_quantile(i.paced));
    impl_median.push_back(i.m.stats.median);
  }
  if (round_trip.size() < 3) return std::nullopt;
  const double trip = std::max(0.0, median_of(round_trip));
  // How far the baseline's own round trip wanders from block to block (its interquartile range):
  // an excess within it cannot be told from the machine's load.
  std::vector<double> trips = round_trip;
  std::sort(trips.begin(), trips.end());
  const double wander = trips[trips.size() * 3 / 4] - trips[trips.size() / 4];
  const double slack = std::max({options.min_excess_per_call > 0 ? options.min_excess_per_call : options.device ? 200e-6 : 5e-6,
                                 trip / (options.pinned ? 4 : 2), wander});
  std::vector<double> excess, true_time;
  std::size_t beyond = 0;
  for (std::size_t k = 0; k < impl_span.size(); ++k) {
    true_time.push_back(impl_span[k] - trip);
    excess.push_back(impl_span[k] - trip - impl_median[k]);
    beyond += excess.back() > std::max(impl_median[k], slack);
  }
  const double e = median_of(excess), t = median_of(true_time), r = median_of(impl_median);
  if (e > std::max(r, slack) && 4 * beyond >= 3 * excess.size())
    return fmt::format("the host's clock says each of its samples took about {} from its inputs' go to its end (the lower quartile, less "
                       "the {} round trip of the baseline's worker), but its worker reported {} (median over {} blocks): a forged clock, "
                       "or work done outside the timed region",
                       us(t), us(trip), us(r), excess.size());
  return std::nullopt;
}

std::optional<std::string> audit_checked_calls(const std::vector<BlockRecord>& impl, const AuditOptions& options) {
  const double slack = options.min_excess_per_call > 0 ? options.min_excess_per_call : options.device ? 200e-6 : 5e-6;
  std::vector<double> last, typical;
  for (std::size_t k = 1; k < impl.size(); ++k) {
    const auto& s = impl[k].m.samples;
    if (s.size() < 3) continue;
    last.push_back(s.back());
    typical.push_back(impl[k].m.stats.median);
  }
  if (last.size() < 3) return std::nullopt;
  const double l = median_of(last), t = median_of(typical);
  std::size_t slower = 0;
  for (std::size_t k = 0; k < last.size(); ++k) slower += last[k] > 4 * typical[k] + slack;
  if (l > 4 * t + slack && 4 * slower >= 3 * last.size())
    return fmt::format("the calls whose outputs the host checked (the last of each block) took {} against {} for the others (median "
                       "over {} blocks): it does the work only where it is checked",
                       us(l), us(t), last.size());
  return std::nullopt;
}

std::optional<std::string> audit_floor(double median_seconds, std::optional<double> bytes, double peak_bytes_per_second) {
  if (!bytes || *bytes <= 0 || peak_bytes_per_second <= 0 || median_seconds <= 0) return std::nullopt;
  const double floor = *bytes / peak_bytes_per_second;
  if (median_seconds >= 0.5 * floor) return std::nullopt;
  return fmt::format("its median {} is below the physical floor: the case moves {:.0f} bytes, which takes {} at the measured peak "
                     "bandwidth ({:.1f} GB/s); a time under half of that cannot be real",
                     us(median_seconds), *bytes, us(floor), peak_bytes_per_second / 1e9);
}

std::optional<std::string> audit_timing(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base, const TimingAudit& a) {
  // A CPU block on fresh inputs is judged on a secret sample, never its last: a last sample slower
  // than the others there is only the one that crossed the block's time (a stall on a busy
  // machine ends the block it falls in).
  const bool paced = std::any_of(impl.begin(), impl.end(), [](const BlockRecord& b) { return !b.paced.empty(); });
  std::optional<std::string> why = paced ? std::nullopt : audit_checked_calls(impl, a.options);
  if (!why && !base.empty()) why = paced ? audit_paced(impl, base, a.options) : audit_clock(impl, base, a.options);
  if (!why && a.cold) why = audit_floor(a.median, a.bytes, a.peak_bytes_per_second);
  return why;
}

}  // namespace bb
