// The roofline bound of a timed case: the shortest time the device's measured peaks allow for
// its work (FLOPs at the compute peak that applies to its dtype, bytes at the bandwidth peak),
// and how close the measured time came to it.
#pragma once

#include <optional>
#include <string>

#include "dtype.hpp"

namespace bb {

struct Roofline {
  double pct = 0;       // the bound's time over the measured time, x100 (100: at the roof)
  std::string bound;    // "compute" | "memory": which of the two sets the bound
  std::string compute;  // the compute peak used: "fp32", "fp16 tensor", "bf16 tensor"
};

// The compute kind a dtype's FLOPs are held to: fp32 for float32 (and float64, whose own peak
// is not measured: the bound is then loose), the tensor peak for float16 and bfloat16.
std::string compute_kind_for(DType dtype);

// Both peaks known and positive, the time positive, FLOPs given: the roofline; else none.
// `peak_gbps`: bytes read plus written per second / 1e9; `peak_tflops`: FLOPs per second / 1e12.
std::optional<Roofline> roofline(std::optional<double> flops, std::optional<double> bytes, double seconds, double peak_gbps,
                                 double peak_tflops);

}  // namespace bb
