#include "measure/roofline.hpp"

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

}  // namespace bb
