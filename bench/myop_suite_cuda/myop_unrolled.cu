// Right: four elements per thread.
#include "myop_suite.cuh"

__global__ void unrolled_kernel(const float* x, float* y, int64_t n, float alpha) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (first + k < n) y[first + k] = x[first + k] * alpha;
}

extern "C" BB_EXPORT int myop_kernel_impl(const bb_call* call) { return myop_launch(call, unrolled_kernel, 4); }
MYOP_SUITE_INFO("1.0.0")
