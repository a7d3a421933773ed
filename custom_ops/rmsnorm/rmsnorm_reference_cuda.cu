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
}  // namespace

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
