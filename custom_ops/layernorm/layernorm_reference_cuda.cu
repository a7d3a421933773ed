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
}  // namespace

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
