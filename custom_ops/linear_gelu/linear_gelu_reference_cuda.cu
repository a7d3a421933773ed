// linear_gelu's reference on a CUDA device, as linear_gelu_reference.cpp: out = gelu(x @ weight^T
// + bias) in double precision with the exact GELU (erf). A thread per output element, the
// operands staged through shared memory in 16x16 tiles; each dot product starts from the bias and
// adds its products in the CPU's order (k = 0, 1, ...), unfused, so it is the CPU's sum. The
// backward, as the CPU's: dz = grad_out * gelu'(z) from the same dot products (double scratch),
// then a thread per element of grad_x, grad_weight and grad_bias, each summing in the CPU's order.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
constexpr int kTile = 16;

// kBackward: dz[i, j] = grad_out[i, j] * gelu'(z) (double) instead of out[i, j] = gelu(z).
template <typename T, bool kBackward = false>
__global__ void linear_gelu_reference_kernel(const T* x, const T* w, const T* b, T* out, int64_t m, int64_t n, int64_t k, const T* grad_out = nullptr,
                                             double* dz = nullptr) {
  __shared__ double xs[kTile][kTile + 1];
  __shared__ double ws[kTile][kTile + 1];
  const int64_t i = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;  // row of x and out
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;  // row of weight, column of out
  const int64_t wj = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.y;  // the weight row this thread stages
  double acc = j < n ? ref::load(b, j) : 0.0;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    const int64_t p = p0 + threadIdx.x;
    xs[threadIdx.y][threadIdx.x] = i < m && p < k ? ref::load(x, i * k + p) : 0.0;
    ws[threadIdx.y][threadIdx.x] = wj < n && p < k ? ref::load(w, wj * k + p) : 0.0;
    __syncthreads();
    const int steps = static_cast<int>(k - p0 < kTile ? k - p0 : kTile);
    for (int q = 0; q < steps; ++q) acc = __dadd_rn(acc, __dmul_rn(xs[threadIdx.y][q], ws[threadIdx.x][q]));
    __syncthreads();
  }
  if (i >= m || j >= n) return;
  if constexpr (kBackward) {
    const double cdf = __dmul_rn(0.5, __dadd_rn(1.0, erf(acc / sqrt(2.0)))), pdf = exp(-0.5 * acc * acc) / sqrt(2.0 * M_PI);
    dz[i * n + j] = __dmul_rn(ref::load(grad_out, i * n + j), __dadd_rn(cdf, __dmul_rn(acc, pdf)));
  } else {
    ref::store(out, i * n + j, __dmul_rn(__dmul_rn(0.5, acc), __dadd_rn(1.0, erf(acc / sqrt(2.0)))));
  }
}

// grad_x[i, p] = the sum over j of dz[i, j] weight[j, p], in j's order.
template <typename T>
struct GradX {
  const double* dz;
  const T* w;
  T* gx;
  int64_t n, k;
  __device__ void operator()(int64_t e) const {
    const int64_t i = e / k, p = e % k;
    double acc = 0;
    for (int64_t j = 0; j < n; ++j) acc = __dadd_rn(acc, __dmul_rn(dz[i * n + j], ref::load(w, j * k + p)));
    ref::store(gx, e, acc);
  }
};
// grad_weight[j, p] = the sum over i of dz[i, j] x[i, p]; grad_bias[j] = the sum over i of
// dz[i, j] (the thread of p = 0), in i's order.
template <typename T>
struct GradWeight {
  const double* dz;
  const T* x;
  T* gw;
  T* gb;
  int64_t m, n, k;
  __device__ void operator()(int64_t e) const {
    const int64_t j = e / k, p = e % k;
    double acc = 0, bias = 0;
    for (int64_t i = 0; i < m; ++i) {
      acc = __dadd_rn(acc, __dmul_rn(dz[i * n + j], ref::load(x, i * k + p)));
      bias = __dadd_rn(bias, dz[i * n + j]);
    }
    ref::store(gw, e, acc);
    if (p == 0) ref::store(gb, j, bias);
  }
};
// grad_bias where K is 0 (no thread of grad_weight's has p = 0).
template <typename T>
struct GradBias {
  const double* dz;
  T* gb;
  int64_t m, n;
  __device__ void operator()(int64_t j) const {
    double bias = 0;
    for (int64_t i = 0; i < m; ++i) bias = __dadd_rn(bias, dz[i * n + j]);
    ref::store(gb, j, bias);
  }
};
}  // namespace

void linear_gelu_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  DLTensor& out = c.output("out");
  BB_CHECK(x.ndim == 2 && w.ndim == 2, "x and weight must be matrices");
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  BB_CHECK(w.shape[1] == k && bb::numel_of(b) == n && bb::numel_of(out) == m * n, "shapes: x [M, K], weight [N, K], bias [N], out [M, N]");
  BB_CHECK((m + kTile - 1) / kTile <= 65535, "at most 65535 * 16 rows");
  if (m == 0 || n == 0) return;
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile));
  const dim3 block(kTile, kTile);
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    linear_gelu_reference_kernel<T><<<grid, block, 0, stream_of(c)>>>(static_cast<const T*>(x.data), static_cast<const T*>(w.data),
                                                                      static_cast<const T*>(b.data), static_cast<T*>(out.data), m, n, k);
  });
  check_launch("linear_gelu_reference (CUDA)");
}

void linear_gelu_backward_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  const DLTensor& g = c.input("grad_out");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  DLTensor& gb = c.output("grad_bias");
  BB_CHECK(x.ndim == 2 && w.ndim == 2, "x and weight must be matrices");
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  BB_CHECK(w.shape[1] == k && bb::numel_of(b) == n && bb::numel_of(g) == m * n, "shapes: x [M, K], weight [N, K], bias [N], grad_out [M, N]");
  BB_CHECK((m + kTile - 1) / kTile <= 65535, "at most 65535 * 16 rows");
  const cudaStream_t stream = stream_of(c);
  double* dz = nullptr;
  if (m * n > 0) BB_CHECK(cudaMallocAsync(&dz, static_cast<std::size_t>(m * n) * sizeof(double), stream) == cudaSuccess, "cannot allocate dz");
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xp = static_cast<const T*>(x.data);
    const auto* wp = static_cast<const T*>(w.data);
    if (m * n > 0) {
      const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile));
      linear_gelu_reference_kernel<T, true><<<grid, dim3(kTile, kTile), 0, stream>>>(xp, wp, static_cast<const T*>(b.data), nullptr, m, n, k,
                                                                                    static_cast<const T*>(g.data), dz);
      check_launch("linear_gelu_backward_reference (CUDA), dz");
    }
    ref::for_each(m * k, GradX<T>{dz, wp, static_cast<T*>(gx.data), n, k}, stream, "linear_gelu_backward_reference (CUDA), grad_x");
    ref::for_each(n * k, GradWeight<T>{dz, xp, static_cast<T*>(gw.data), static_cast<T*>(gb.data), m, n, k}, stream,
                  "linear_gelu_backward_reference (CUDA), grad_weight");
    if (k == 0) ref::for_each(n, GradBias<T>{dz, static_cast<T*>(gb.data), m, n}, stream, "linear_gelu_backward_reference (CUDA), grad_bias");
  });
  if (dz) (void)cudaFreeAsync(dz, stream);
}
}  // namespace ops
