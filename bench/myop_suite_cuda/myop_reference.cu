// The suite's reference, on the GPU: y = x * alpha.
#include "myop_suite.cuh"

__global__ void reference_kernel(const float* x, float* y, int64_t n, float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * alpha;
}

extern "C" BB_EXPORT int myop_reference(const bb_call* call) { return myop_launch(call, reference_kernel); }
MYOP_SUITE_INFO("1.0.0")
