// rmsnorm on CUDA, one warp per row: eight rows per 256-thread block, the sum of squares reduced
// with warp shuffles alone (no shared memory, no barrier). Suits many short rows.
#include "../common/cuda_reduce.cuh"
#include "rmsnorm_cuda_common.cuh"

namespace {

constexpr int kRowsPerBlock = 8;

template <typename T>
__global__ void rmsnorm_warp_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int64_t rows, int64_t cols,
                                    float eps) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together: the shuffles below stay full
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  float ss = 0.0f;
  for (int64_t i = lane; i < cols; i += 32) {
    const float v = ops::to_float(xr[i]);
    ss += v * v;
  }
  ss = ops::warp_sum(ss);
  const float inv = rsqrtf(ss / static_cast<float>(cols) + eps);
  for (int64_t i = lane; i < cols; i += 32) yr[i] = ops::from_float<T>(ops::to_float(xr[i]) * inv * ops::to_float(w[i]));
}

void rmsnorm(bb::Call& c) {
  const auto a = rmsnorm_cuda::args_of(c);
  if (a.rows == 0 || a.cols == 0) return;
  const auto blocks = static_cast<unsigned>((a.rows + kRowsPerBlock - 1) / kRowsPerBlock);
  ops::dispatch_cuda_floating(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>)
      rmsnorm_warp_kernel<T><<<blocks, 32 * kRowsPerBlock, 0, a.stream>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.w),
                                                                          static_cast<T*>(a.y), a.rows, a.cols, a.eps);
  });
  ops::check_launch("rmsnorm_cuda_warp");
}

}  // namespace

BB_KERNEL_IMPL(rmsnorm, rmsnorm)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
