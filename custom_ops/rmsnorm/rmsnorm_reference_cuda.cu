// rmsnorm's reference on a CUDA device, as rmsnorm_reference.cpp: a row per block, its sum of
// squares in double precision, y = x * (1 / sqrt(mean + eps)) * weight.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
template <typename T>
struct RmsRow {
  const T* x;
  const T* w;
  T* y;
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double ss = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) ss = __dadd_rn(ss, __dmul_rn(ref::load(xr, i), ref::load(xr, i)));
    ss = ref::block_sum(ss);
    const double inv = 1.0 / sqrt(ss / static_cast<double>(cols) + eps);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) ref::store(yr, i, __dmul_rn(__dmul_rn(ref::load(xr, i), inv), ref::load(w, i)));
  }
};

// The backward's rows: grad_x, and each row's inv kept for the columns' sums.
template <typename T>
struct RmsBackwardRow {
  const T* x;
  const T* w;
  const T* g;
  T* gx;
  double* inv_of;
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    const T* gr = g + r * cols;
    double ss = 0, dot = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const double xi = ref::load(xr, i);
      ss = __dadd_rn(ss, __dmul_rn(xi, xi));
      dot = __dadd_rn(dot, __dmul_rn(__dmul_rn(ref::load(w, i), ref::load(gr, i)), xi));
    }
    ss = ref::block_sum(ss);
    dot = ref::block_sum(dot);
    const double inv = 1.0 / sqrt(ss / static_cast<double>(cols) + eps);
    const double k = __dmul_rn(__dmul_rn(__dmul_rn(inv, inv), inv), dot) / static_cast<double>(cols);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      ref::store(gx + r * cols, i, __dadd_rn(__dmul_rn(__dmul_rn(inv, ref::load(w, i)), ref::load(gr, i)), -__dmul_rn(ref::load(xr, i), k)));
    if (threadIdx.x == 0) inv_of[r] = inv;
  }
};

// grad_weight: each column's sum over the rows, in the rows' order (the CPU's).
template <typename T>
struct RmsBackwardColumn {
  const T* x;
  const T* g;
  const double* inv_of;
  T* gw;
  int64_t rows, cols;
  __device__ void operator()(int64_t i) const {
    double acc = 0;
    for (int64_t r = 0; r < rows; ++r) acc = __dadd_rn(acc, __dmul_rn(__dmul_rn(ref::load(g, r * cols + i), ref::load(x, r * cols + i)), inv_of[r]));
    ref::store(gw, i, acc);
  }
};
}  // namespace

void rmsnorm_backward_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  BB_CHECK(bb::numel_of(g) == bb::numel_of(x) && bb::numel_of(gx) == bb::numel_of(x), "x, grad_y and grad_x differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  const double eps = c.attr<double>("eps", 1e-6);
  const cudaStream_t stream = stream_of(c);
  double* inv_of = nullptr;
  if (rows > 0) BB_CHECK(cudaMallocAsync(&inv_of, static_cast<std::size_t>(rows) * sizeof(double), stream) == cudaSuccess, "cannot allocate a row's scratch");
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xp = static_cast<const T*>(x.data);
    const auto* gp = static_cast<const T*>(g.data);
    ref::for_each_row(rows, RmsBackwardRow<T>{xp, static_cast<const T*>(w.data), gp, static_cast<T*>(gx.data), inv_of, cols, eps}, stream,
                      "rmsnorm_backward_reference (CUDA), rows");
    ref::for_each(cols, RmsBackwardColumn<T>{xp, gp, inv_of, static_cast<T*>(gw.data), rows, cols}, stream,
                  "rmsnorm_backward_reference (CUDA), columns");
  });
  if (inv_of) (void)cudaFreeAsync(inv_of, stream);
}

void rmsnorm_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  DLTensor& y = c.output("y");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  BB_CHECK(bb::numel_of(y) == bb::numel_of(x), "x and y differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  const double eps = c.attr<double>("eps", 1e-6);
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each_row(rows, RmsRow<T>{static_cast<const T*>(x.data), static_cast<const T*>(w.data), static_cast<T*>(y.data), cols, eps},
                      stream_of(c), "rmsnorm_reference (CUDA)");
  });
}
}  // namespace ops
