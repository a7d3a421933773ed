#include "measure/peak_shares.hpp"

#include "measure/roofline.hpp"

namespace bb {

void add_peak_shares(TestResult& r, const DeviceKind& kind, DType dtype) {
  const std::string compute_kind = compute_kind_for(dtype);
  auto& perf = r.performance;
  if (!perf.timing) return;
  const DeviceFacts* facts = kind.device(r.id.device_index);
  const double measured = facts ? facts->measured_gbps : 0.0, theoretical = facts ? facts->peak_bandwidth_gbps : 0.0;
  if (perf.gbps) {
    if (measured > 0) perf.peak_pct = *perf.gbps / measured * 100;
    if (theoretical > 0) perf.peak_pct_theoretical = *perf.gbps / theoretical * 100;
  }
  if (!r.id.flops) return;
  if (auto rl = roofline(r.id.flops, r.id.bytes, perf.timing->stats.median, measured, facts ? facts->peak_tflops(compute_kind) : 0.0)) {
    perf.roofline_pct = rl->pct;
    perf.roofline_bound = rl->bound;
    perf.roofline_compute = compute_kind;
  }
}

}  // namespace bb
