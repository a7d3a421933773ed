// inplace_rmsnorm_'s reference on a CUDA device, as inplace_rmsnorm_reference.cpp: a row per
// block, its sum of squares in double precision, then x = x * (1 / sqrt(mean + eps)) * weight
// written over the row (each thread writes only the elements it read).
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
template <typename T>
struct RmsRowInPlace {
  T* x;
  const T* w;
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    T* xr = x + r * cols;
    double ss = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) ss = __dadd_rn(ss, __dmul_rn(ref::load(xr, i), ref::load(xr, i)));
    ss = ref::block_sum(ss);  // every read of the row is done before any write
    const double inv = 1.0 / sqrt(ss / static_cast<double>(cols) + eps);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) ref::store(xr, i, __dmul_rn(__dmul_rn(ref::load(xr, i), inv), ref::load(w, i)));
  }
};
}  // namespace

void inplace_rmsnorm_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  DLTensor& x = c.output("x_out");  // the same buffer as input x
  const DLTensor& w = c.input("weight");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  const double eps = c.attr<double>("eps", 1e-6);
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each_row(rows, RmsRowInPlace<T>{static_cast<T*>(x.data), static_cast<const T*>(w.data), cols, eps}, stream_of(c),
                      "inplace_rmsnorm_reference (CUDA)");
  });
}
}  // namespace ops
