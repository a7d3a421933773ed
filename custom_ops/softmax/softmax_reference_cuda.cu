// softmax's reference on a CUDA device, as softmax_reference.cpp: a row (the last dimension) per
// block, in double precision: its maximum, the sum of exp(x - max), then exp(x - max) / sum.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
template <typename T>
struct SoftmaxRow {
  const T* x;
  T* y;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double m = -INFINITY;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmax(m, ref::load(xr, i));
    m = ref::block_max(m);
    double s = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s = __dadd_rn(s, exp(__dsub_rn(ref::load(xr, i), m)));
    s = ref::block_sum(s);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) ref::store(yr, i, exp(__dsub_rn(ref::load(xr, i), m)) / s);
  }
};
}  // namespace

void softmax_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  DLTensor& y = c.output("y");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(y) == bb::numel_of(x), "x and y differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each_row(rows, SoftmaxRow<T>{static_cast<const T*>(x.data), static_cast<T*>(y.data), cols}, stream_of(c),
                      "softmax_reference (CUDA)");
  });
}
}  // namespace ops
