// rmsnorm on CUDA, one block per row. Rows that suit 16-byte vectors are held in registers
// (common/cuda_rms_rows.cuh: one read of x); others are strided over by the block's threads for
// the sum of squares, reduced in shared memory, then scaled (x is read twice, the second time
// mostly from L2). Suits long rows.
#include "../common/cuda_column_shares.cuh"
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


// The backward. A block takes a run of rows: for each, its sum of squares and
// sum(weight * grad_y * x), then grad_x, adding the row's grad_y * x * inv to the block's share
// of grad_weight (in shared memory where a row's columns fit, else in its own row of
// `partials`: common/cuda_column_shares.cuh, whose column_sums adds the shares).
template <typename T>
__global__ void rmsnorm_backward_rows(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ g, T* __restrict__ gx,
                                      float* __restrict__ partials, int64_t rows, int64_t cols, float eps, bool shared_share) {
  extern __shared__ float share_smem[];
  __shared__ float scratch[32];
  float* share = shared_share ? share_smem : partials + blockIdx.x * cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) share[i] = 0.0f;
  int64_t first = 0, last = 0;
  ops::block_rows(rows, first, last);
  for (int64_t r = first; r < last; ++r) {
    const T* xr = x + r * cols;
    const T* gr = g + r * cols;
    float ss = 0.0f, dot = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float xi = ops::to_float(xr[i]);
      ss += xi * xi;
      dot += ops::to_float(w[i]) * ops::to_float(gr[i]) * xi;
    }
    ss = ops::block_sum(ss, scratch);
    dot = ops::block_sum(dot, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(cols) + eps);
    const float k = inv * inv * inv * dot / static_cast<float>(cols);
    T* gxr = gx + r * cols;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float xi = ops::to_float(xr[i]), gi = ops::to_float(gr[i]);
      gxr[i] = ops::from_float<T>(inv * ops::to_float(w[i]) * gi - xi * k);
      share[i] += gi * xi * inv;
    }
  }
  if (shared_share)
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) partials[blockIdx.x * cols + i] = share[i];
}

void rmsnorm_backward(bb::Call& c) {
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  for (const auto* t : {&g, static_cast<const DLTensor*>(&gx), static_cast<const DLTensor*>(&gw)}) ops::require_cuda(*t, "a gradient");
  const auto a = rmsnorm_cuda::backward_args_of(c);
  BB_CHECK(bb::numel_of(g) == a.rows * a.cols && bb::numel_of(gx) == a.rows * a.cols && bb::numel_of(gw) == a.cols,
           "grad_y and grad_x must have x's size, grad_weight weight's");
  if (a.cols == 0) return;
  const int threads = a.cols >= 4096 ? 1024 : a.cols >= 1024 ? 512 : 128;
  const int blocks = ops::share_blocks(a.rows, threads);
  float* partials = ops::share_buffer(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(a.cols));
  const std::size_t share_bytes = static_cast<std::size_t>(a.cols) * sizeof(float);
  const bool shared_share = share_bytes <= 32 * 1024;
  ops::dispatch_cuda_floating(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      rmsnorm_backward_rows<T><<<static_cast<unsigned>(blocks), threads, shared_share ? share_bytes : 0, a.stream>>>(
          static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<const T*>(g.data), static_cast<T*>(gx.data), partials, a.rows,
          a.cols, a.eps, shared_share);
      ops::column_sums<T>(partials, a.rows == 0 ? 0 : blocks, a.cols, static_cast<T*>(gw.data), a.cols, a.stream);
    }
  });
  ops::check_launch("rmsnorm_cuda_block (backward)");
}

}  // namespace

BB_KERNEL_IMPL(rmsnorm, rmsnorm)
BB_BACKWARD_IMPL(rmsnorm, rmsnorm_backward)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
