// Right: a grid-stride loop.
#include "myop_suite.cuh"

__global__ void loop_kernel(const float* x, float* y, int64_t n, float alpha) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] * alpha;
}

extern "C" BB_EXPORT int myop_kernel_impl(const bb_call* call) { return myop_launch(call, loop_kernel); }
MYOP_SUITE_INFO("1.0.0")
