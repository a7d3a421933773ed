// rmsnorm on CUDA, one block per row. Rows that suit 16-byte vectors are held in registers
// (common/cuda_rms_rows.cuh: one read of x); others are strided over by the block's threads for
// the sum of squares, reduced in shared memory, then scaled (x is read twice, the second time
// mostly from L2). Suits long rows.
#include "../common/cuda_reduce.cuh"
#include "../common/cuda_rms_rows.cuh"
#include "rmsnorm_cuda_common.cuh"

namespace {

template <typename T>
__global__ void rmsnorm_block_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * cols;
  T* yr = y + blockIdx.x * cols;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const float v = ops::to_float(xr[i]);
    ss += v * v;
  }
  ss = ops::block_sum(ss, scratch);
  const float inv = rsqrtf(ss / static_cast<float>(cols) + eps);
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
    yr[i] = ops::from_float<T>(ops::to_float(xr[i]) * inv * ops::to_float(w[i]));
}

void rmsnorm(bb::Call& c) {
  const auto a = rmsnorm_cuda::args_of(c);
  if (a.rows == 0 || a.cols == 0) return;
  const int threads = a.cols >= 4096 ? 1024 : a.cols >= 1024 ? 512 : 128;
  ops::dispatch_cuda_floating(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      const auto* x = static_cast<const T*>(a.x);
      const auto* w = static_cast<const T*>(a.w);
      auto* y = static_cast<T*>(a.y);
      if (!ops::launch_rms_rows_vec<T>(x, w, y, a.rows, a.cols, a.eps, a.stream))
        rmsnorm_block_kernel<T><<<static_cast<unsigned>(a.rows), threads, 0, a.stream>>>(x, w, y, a.cols, a.eps);
    }
  });
  ops::check_launch("rmsnorm_cuda_block");
}

}  // namespace

BB_KERNEL_IMPL(rmsnorm, rmsnorm)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
