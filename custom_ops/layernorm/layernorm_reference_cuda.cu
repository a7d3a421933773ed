// layernorm's reference on a CUDA device, as layernorm_reference.cpp: a row per block, in double
// precision, two passes (mean, then variance), y = (x - mean) * inv * weight + bias.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
template <typename T>
struct LayerNormRow {
  const T* x;
  const T* w;
  const T* b;
  T* y;
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum = __dadd_rn(sum, ref::load(xr, i));
    const double mean = ref::block_sum(sum) / static_cast<double>(cols);
    double var = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const double d = __dsub_rn(ref::load(xr, i), mean);
      var = __dadd_rn(var, __dmul_rn(d, d));
    }
    var = ref::block_sum(var);
    const double inv = 1.0 / sqrt(var / static_cast<double>(cols) + eps);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      ref::store(yr, i, __dadd_rn(__dmul_rn(__dmul_rn(__dsub_rn(ref::load(xr, i), mean), inv), ref::load(w, i)), ref::load(b, i)));
  }
};

// The backward's rows, as layernorm_reference.cpp's: grad_x, and each row's mean and inv kept
// for the columns' sums.
template <typename T>
struct LayerNormBackwardRow {
  const T* x;
  const T* w;
  const T* g;
  T* gx;
  double* stats;  // mean, inv of each row
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    const T* gr = g + r * cols;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum = __dadd_rn(sum, ref::load(xr, i));
    const double mean = ref::block_sum(sum) / static_cast<double>(cols);
    double var = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const double d = __dsub_rn(ref::load(xr, i), mean);
      var = __dadd_rn(var, __dmul_rn(d, d));
    }
    var = ref::block_sum(var);
    const double inv = 1.0 / sqrt(var / static_cast<double>(cols) + eps);
    double a = 0, b = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const double wg = __dmul_rn(ref::load(w, i), ref::load(gr, i));
      a = __dadd_rn(a, wg);
      b = __dadd_rn(b, __dmul_rn(wg, __dmul_rn(__dsub_rn(ref::load(xr, i), mean), inv)));
    }
    a = ref::block_sum(a) / static_cast<double>(cols);
    b = ref::block_sum(b) / static_cast<double>(cols);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const double xhat = __dmul_rn(__dsub_rn(ref::load(xr, i), mean), inv);
      ref::store(gx + r * cols, i, __dmul_rn(inv, __dsub_rn(__dsub_rn(__dmul_rn(ref::load(w, i), ref::load(gr, i)), a), __dmul_rn(xhat, b))));
    }
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = inv;
    }
  }
};

// grad_weight and grad_bias: each column's sums over the rows, in the rows' order (the CPU's).
template <typename T>
struct LayerNormBackwardColumn {
  const T* x;
  const T* g;
  const double* stats;
  T* gw;
  T* gb;
  int64_t rows, cols;
  __device__ void operator()(int64_t i) const {
    double acc_w = 0, acc_b = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const double gi = ref::load(g, r * cols + i);
      acc_w = __dadd_rn(acc_w, __dmul_rn(gi, __dmul_rn(__dsub_rn(ref::load(x, r * cols + i), stats[2 * r]), stats[2 * r + 1])));
      acc_b = __dadd_rn(acc_b, gi);
    }
    ref::store(gw, i, acc_w);
    ref::store(gb, i, acc_b);
  }
};
}  // namespace

void layernorm_backward_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  DLTensor& gb = c.output("grad_bias");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(w) == cols && bb::numel_of(gw) == cols && bb::numel_of(gb) == cols,
           "weight, grad_weight and grad_bias must have as many elements as x's last dimension");
  BB_CHECK(bb::numel_of(g) == bb::numel_of(x) && bb::numel_of(gx) == bb::numel_of(x), "x, grad_y and grad_x differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  const double eps = c.attr<double>("eps", 1e-5);
  const cudaStream_t stream = stream_of(c);
  double* stats = nullptr;
  if (rows > 0) BB_CHECK(cudaMallocAsync(&stats, static_cast<std::size_t>(rows) * 2 * sizeof(double), stream) == cudaSuccess, "cannot allocate the rows' statistics");
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xp = static_cast<const T*>(x.data);
    const auto* gp = static_cast<const T*>(g.data);
    ref::for_each_row(rows, LayerNormBackwardRow<T>{xp, static_cast<const T*>(w.data), gp, static_cast<T*>(gx.data), stats, cols, eps}, stream,
                      "layernorm_backward_reference (CUDA), rows");
    ref::for_each(cols, LayerNormBackwardColumn<T>{xp, gp, stats, static_cast<T*>(gw.data), static_cast<T*>(gb.data), rows, cols}, stream,
                  "layernorm_backward_reference (CUDA), columns");
  });
  if (stats) (void)cudaFreeAsync(stats, stream);
}

void layernorm_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  DLTensor& y = c.output("y");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(w) == cols && bb::numel_of(b) == cols, "weight and bias must have as many elements as x's last dimension");
  BB_CHECK(bb::numel_of(y) == bb::numel_of(x), "x and y differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  const double eps = c.attr<double>("eps", 1e-5);
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each_row(rows,
                      LayerNormRow<T>{static_cast<const T*>(x.data), static_cast<const T*>(w.data), static_cast<const T*>(b.data),
                                      static_cast<T*>(y.data), cols, eps},
                      stream_of(c), "layernorm_reference (CUDA)");
  });
}
}  // namespace ops
