#include "roofline.hpp"

#include <algorithm>

namespace bb {

std::string compute_kind_for(DType dtype) {
  switch (dtype) {
    case DType::float16:
      return "fp16 tensor";
    case DType::bfloat16:
      return "bf16 tensor";
    default:
      return "fp32";
  }
}

std::optional<Roofline> roofline(std::optional<double> flops, std::optional<double> bytes, double seconds, double peak_gbps,
                                 double peak_tflops) {
  if (!flops || *flops <= 0 || !(seconds > 0) || !(peak_tflops > 0)) return std::nullopt;
  const double compute_s = *flops / (peak_tflops * 1e12);
  const double memory_s = bytes && *bytes > 0 && peak_gbps > 0 ? *bytes / (peak_gbps * 1e9) : 0.0;
  Roofline r;
  r.bound = compute_s >= memory_s ? "compute" : "memory";
  r.pct = std::max(compute_s, memory_s) / seconds * 100;
  return r;
}

double peak_tflops(const nlohmann::json& device_kind, int ordinal, const std::string& kind) {
  const auto devs = device_kind.value("devices", nlohmann::json::array());
  if (!devs.is_array()) return 0;
  for (const auto& d : devs) {
    if (!d.is_object() || d.value("ordinal", -1) != ordinal) continue;
    const auto figures = d.value("measured_compute", nlohmann::json::array());
    if (!figures.is_array()) return 0;
    double best = 0;  // several strategies may measure one kind: the best is its peak
    for (const auto& f : figures)
      if (f.is_object() && f.value("kind", "") == kind) best = std::max(best, f.value("tflops", 0.0));
    return best;
  }
  return 0;
}

}  // namespace bb
