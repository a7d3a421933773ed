// linear_gelu on CUDA: a tiled GEMM (64x64 outputs per block, the inner dimension in steps of 16
// through shared memory, 4x4 outputs per thread in registers) whose epilogue does the rest, so no
// product goes to memory unfinished. The forward: out = gelu(x @ weight^T + bias), accumulated in
// float, the bias and the exact GELU in the epilogue. The backward, three products of the same
// kernel accumulated in double (in float, the value variants' sums of mixed and huge magnitudes
// missed the 1e-4 tolerance by up to 3%, on the H100 of 2026-12-08): dz = grad_out * gelu'(x @
// weight^T + bias) (the forward's product again, its epilogue the GELU's derivative, into double
// scratch), grad_x = dz @ weight, grad_weight = dz^T @ x; grad_bias is dz's column sums.
#include "../common/cuda_column_shares.cuh"  // share_buffer: the backward's scratch
#include "../common/cuda_types.cuh"

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16, kThreads = 256;

// An operand's element as the accumulator's type (a double operand is taken whole).
template <typename Acc, typename T>
__device__ __forceinline__ Acc load_as(const T* p, int64_t i) {
  return static_cast<Acc>(ops::to_float(p[i]));
}
template <typename Acc>
__device__ __forceinline__ Acc load_as(const double* p, int64_t i) {
  return static_cast<Acc>(p[i]);
}

// C = A B, C [rows, cols], A [rows, inner] (stored transposed where kTransA: a[t * rows + r]), B
// [inner, cols] (stored transposed where kTransB: b[c * inner + t]), accumulated in Acc;
// `epilogue(r, c, acc)` writes each element of C.
template <typename Acc, bool kTransA, bool kTransB, typename TA, typename TB, typename Epilogue>
__global__ void __launch_bounds__(kThreads) gemm_kernel(const TA* __restrict__ a, const TB* __restrict__ b, int rows, int cols, int inner,
                                                        Epilogue epilogue) {
  __shared__ Acc as[kBK][kBM + 4];
  __shared__ Acc bs[kBK][kBN + 4];
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  Acc acc[4][4] = {};
  for (int k0 = 0; k0 < inner; k0 += kBK) {
#pragma unroll
    for (int r = 0; r < (kBM * kBK) / kThreads; ++r) {
      const int e = threadIdx.x + r * kThreads, row = e / kBK, col = e % kBK;
      const int gm = m0 + row, gn = n0 + row, gk = k0 + col;
      const int64_t at_a = kTransA ? static_cast<int64_t>(gk) * rows + gm : static_cast<int64_t>(gm) * inner + gk;
      const int64_t at_b = kTransB ? static_cast<int64_t>(gn) * inner + gk : static_cast<int64_t>(gk) * cols + gn;
      as[col][row] = gm < rows && gk < inner ? load_as<Acc>(a, at_a) : Acc(0);
      bs[col][row] = gn < cols && gk < inner ? load_as<Acc>(b, at_b) : Acc(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      Acc av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = as[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int gm = m0 + ty * 4 + i;
    if (gm >= rows) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gn = n0 + tx * 4 + j;
      if (gn < cols) epilogue(gm, gn, acc[i][j]);
    }
  }
}

template <typename Acc, bool kTransA, bool kTransB, typename TA, typename TB, typename Epilogue>
void gemm(const TA* a, const TB* b, int rows, int cols, int inner, Epilogue epilogue, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 grid(static_cast<unsigned>((cols + kBN - 1) / kBN), static_cast<unsigned>((rows + kBM - 1) / kBM));
  gemm_kernel<Acc, kTransA, kTransB><<<grid, kThreads, 0, stream>>>(a, b, rows, cols, inner, epilogue);
}

// The exact GELU, and its derivative Phi(v) + v phi(v) in double.
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }
__device__ __forceinline__ double gelu_grad(double v) { return 0.5 * (1.0 + erf(v * 0.7071067811865476)) + v * 0.3989422804014327 * exp(-0.5 * v * v); }

template <typename T>
struct Activate {  // out = gelu(acc + bias)
  const T* bias;
  T* out;
  int n;
  __device__ void operator()(int r, int c, float acc) const {
    out[static_cast<int64_t>(r) * n + c] = ops::from_float<T>(gelu(acc + ops::to_float(bias[c])));
  }
};
template <typename T>
struct ActivationGrad {  // dz = grad_out * gelu'(acc + bias), in double
  const T* bias;
  const T* grad_out;
  double* dz;
  int n;
  __device__ void operator()(int r, int c, double acc) const {
    const int64_t at = static_cast<int64_t>(r) * n + c;
    dz[at] = static_cast<double>(ops::to_float(grad_out[at])) * gelu_grad(acc + static_cast<double>(ops::to_float(bias[c])));
  }
};
template <typename T>
struct Store {
  T* out;
  int cols;
  __device__ void operator()(int r, int c, double acc) const {
    out[static_cast<int64_t>(r) * cols + c] = ops::from_float<T>(static_cast<float>(acc));
  }
};

// grad_bias[j] = the sum over the rows of dz[i, j], in double.
template <typename T>
__global__ void bias_grad_kernel(const double* __restrict__ dz, int m, int n, T* __restrict__ gb) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  double acc = 0;
  for (int i = 0; i < m; ++i) acc += dz[static_cast<int64_t>(i) * n + j];
  gb[j] = ops::from_float<T>(static_cast<float>(acc));
}

struct Shapes {
  int m, n, k;
};
Shapes shapes_of(const DLTensor& x, const DLTensor& w, const DLTensor& b, int64_t out_elements, const char* out_name) {
  BB_CHECK(x.ndim == 2 && w.ndim == 2, "x and weight must be matrices");
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  BB_CHECK(w.shape[1] == k && bb::numel_of(b) == n && out_elements == m * n,
           std::string("shapes: x [M, K], weight [N, K], bias [N], ") + out_name + " [M, N]");
  BB_CHECK(m < (1 << 30) && n < (1 << 30) && k < (1 << 30), "dimensions beyond 2^30");
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  return {static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)};
}

void linear_gelu(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  DLTensor& out = c.output("out");
  for (const DLTensor* t : {&x, &w, &b, static_cast<const DLTensor*>(&out)}) ops::require_cuda(*t, "x, weight, bias and out");
  const Shapes s = shapes_of(x, w, b, bb::numel_of(out), "out");
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>)
      gemm<float, false, true>(static_cast<const T*>(x.data), static_cast<const T*>(w.data), s.m, s.n, s.k,
                        Activate<T>{static_cast<const T*>(b.data), static_cast<T*>(out.data), s.n}, ops::stream_of(c));
  });
  ops::check_launch("linear_gelu_cuda");
}

void linear_gelu_backward(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  const DLTensor& g = c.input("grad_out");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  DLTensor& gb = c.output("grad_bias");
  for (const DLTensor* t : {&x, &w, &b, &g, static_cast<const DLTensor*>(&gx), static_cast<const DLTensor*>(&gw), static_cast<const DLTensor*>(&gb)})
    ops::require_cuda(*t, "x, weight, bias, grad_out and the gradients");
  const Shapes s = shapes_of(x, w, b, bb::numel_of(g), "grad_out");
  const cudaStream_t stream = ops::stream_of(c);
  // dz [M, N] in double: the shares' buffer (common/cuda_column_shares.cuh) holds two floats a double
  // (cudaMalloc aligns it for either).
  double* dz = reinterpret_cast<double*>(ops::share_buffer(2 * static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n)));
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      const auto* xp = static_cast<const T*>(x.data);
      const auto* wp = static_cast<const T*>(w.data);
      const double* dzc = dz;
      gemm<double, false, true>(xp, wp, s.m, s.n, s.k, ActivationGrad<T>{static_cast<const T*>(b.data), static_cast<const T*>(g.data), dz, s.n}, stream);
      gemm<double, false, false>(dzc, wp, s.m, s.k, s.n, Store<T>{static_cast<T*>(gx.data), s.k}, stream);  // dz @ weight
      gemm<double, true, false>(dzc, xp, s.n, s.k, s.m, Store<T>{static_cast<T*>(gw.data), s.k}, stream);   // dz^T @ x
      if (s.n > 0) bias_grad_kernel<T><<<static_cast<unsigned>((s.n + 255) / 256), 256, 0, stream>>>(dzc, s.m, s.n, static_cast<T*>(gb.data));
    }
  });
  ops::check_launch("linear_gelu_cuda (backward)");
}

}  // namespace

BB_KERNEL_IMPL(linear_gelu, linear_gelu)
BB_BACKWARD_IMPL(linear_gelu, linear_gelu_backward)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
