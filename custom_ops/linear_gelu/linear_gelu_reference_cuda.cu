// linear_gelu's reference on a CUDA device, as linear_gelu_reference.cpp: out = gelu(x @ weight^T
// + bias) in double precision with the exact GELU (erf). A thread per output element, the
// operands staged through shared memory in 16x16 tiles; each dot product starts from the bias and
// adds its products in the CPU's order (k = 0, 1, ...), unfused, so it is the CPU's sum.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
constexpr int kTile = 16;

template <typename T>
__global__ void linear_gelu_reference_kernel(const T* x, const T* w, const T* b, T* out, int64_t m, int64_t n, int64_t k) {
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
  if (i < m && j < n) ref::store(out, i * n + j, __dmul_rn(__dmul_rn(0.5, acc), __dadd_rn(1.0, erf(acc / sqrt(2.0)))));
}
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
}  // namespace ops
