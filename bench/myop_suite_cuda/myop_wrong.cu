// Wrong: adds alpha instead of multiplying (on ones(8), 2 where 1 is expected): FAIL.
#include "myop_suite.cuh"

__global__ void wrong_kernel(const float* x, float* y, int64_t n, float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + alpha;
}

extern "C" BB_EXPORT int myop_kernel_impl(const bb_call* call) { return myop_launch(call, wrong_kernel); }
MYOP_SUITE_INFO("1.0.0")
