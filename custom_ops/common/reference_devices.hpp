// Where a shipped reference computes: on the CPU, and, where the build has CUDA, on the CUDA
// device too (its <op>_reference_cuda.cu, common/cuda_reference.cuh), so that a CUDA test's
// reference runs where the test's buffers are. The info record says which (the run then picks
// the test's device: docs/GPU.md).
#pragma once

#include <backendbench/plugin.hpp>

#include <type_traits>

#ifdef BB_REFERENCE_CUDA
#define BB_REFERENCE_DEVICES "cpu,cuda"
#else
#define BB_REFERENCE_DEVICES "cpu"
#endif

namespace ops {

// True when the call's tensors are on a CUDA device (its first input says). A reference calls
// its CUDA version then, under #ifdef BB_REFERENCE_CUDA (defined where the build has one).
inline bool reference_on_cuda(const bb::Call& c) { return c.num_inputs() > 0 && c.input(0).device.device_type == kDLCUDA; }

// A double result stored as T: rounded to float first, then to a 16-bit type (the forward's
// static_cast<T>(static_cast<float>(v)), which the CUDA references match); a double kept whole.
template <typename T>
void store_rounded(T* p, int64_t i, double v) {
  if constexpr (std::is_same_v<T, double>) p[i] = v;
  else p[i] = static_cast<T>(static_cast<float>(v));
}

}  // namespace ops
