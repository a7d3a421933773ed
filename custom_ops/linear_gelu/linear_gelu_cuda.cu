// linear_gelu on CUDA: a tiled GEMM (64x64 outputs per block, K in steps of 16 through shared
// memory, 4x4 outputs per thread in registers, float accumulation) with the bias and the exact
// GELU applied in the epilogue, so the pre-activation never goes to memory.
#include "../common/cuda_types.cuh"

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16, kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads) linear_gelu_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                                               T* __restrict__ out, int m, int n, int k) {
  __shared__ float as[kBK][kBM + 4];
  __shared__ float bs[kBK][kBN + 4];
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kBK) {
#pragma unroll
    for (int r = 0; r < (kBM * kBK) / kThreads; ++r) {
      const int e = threadIdx.x + r * kThreads, row = e / kBK, col = e % kBK;
      const int gm = m0 + row, gn = n0 + row, gk = k0 + col;
      as[col][row] = gm < m && gk < k ? ops::to_float(x[static_cast<int64_t>(gm) * k + gk]) : 0.0f;
      bs[col][row] = gn < n && gk < k ? ops::to_float(w[static_cast<int64_t>(gn) * k + gk]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = as[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = bs[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int gm = m0 + ty * 4 + i;
    if (gm >= m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gn = n0 + tx * 4 + j;
      if (gn >= n) continue;
      const float v = acc[i][j] + ops::to_float(bias[gn]);
      out[static_cast<int64_t>(gm) * n + gn] = ops::from_float<T>(0.5f * v * (1.0f + erff(v * 0.70710678f)));
    }
  }
}

void linear_gelu(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  DLTensor& out = c.output("out");
  for (const DLTensor* t : {&x, &w, &b, static_cast<const DLTensor*>(&out)}) ops::require_cuda(*t, "x, weight, bias and out");
  BB_CHECK(x.ndim == 2 && w.ndim == 2, "x and weight must be matrices");
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  BB_CHECK(w.shape[1] == k && bb::numel_of(b) == n && bb::numel_of(out) == m * n, "shapes: x [M, K], weight [N, K], bias [N], out [M, N]");
  BB_CHECK(m < (1 << 30) && n < (1 << 30) && k < (1 << 30), "dimensions beyond 2^30");
  if (m == 0 || n == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  const dim3 grid(static_cast<unsigned>((n + kBN - 1) / kBN), static_cast<unsigned>((m + kBM - 1) / kBM));
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>)
      linear_gelu_kernel<T><<<grid, kThreads, 0, ops::stream_of(c)>>>(static_cast<const T*>(x.data), static_cast<const T*>(w.data),
                                                                      static_cast<const T*>(b.data), static_cast<T*>(out.data),
                                                                      static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  });
  ops::check_launch("linear_gelu_cuda");
}

}  // namespace

BB_KERNEL_IMPL(linear_gelu, linear_gelu)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
