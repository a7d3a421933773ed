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

// The backward's row, as softmax_reference.cpp's: y again, then y * (grad_y - sum(grad_y * y)).
template <typename T>
struct SoftmaxBackwardRow {
  const T* x;
  const T* g;
  T* gx;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    const T* xr = x + r * cols;
    const T* gr = g + r * cols;
    double m = -INFINITY;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmax(m, ref::load(xr, i));
    m = ref::block_max(m);
    double s = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s = __dadd_rn(s, exp(__dsub_rn(ref::load(xr, i), m)));
    s = ref::block_sum(s);
    double dot = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) dot = __dadd_rn(dot, __dmul_rn(ref::load(gr, i), exp(__dsub_rn(ref::load(xr, i), m)) / s));
    dot = ref::block_sum(dot);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      ref::store(gx + r * cols, i, __dmul_rn(exp(__dsub_rn(ref::load(xr, i), m)) / s, __dsub_rn(ref::load(gr, i), dot)));
  }
};
}  // namespace

void softmax_backward_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  BB_CHECK(bb::numel_of(g) == bb::numel_of(x) && bb::numel_of(gx) == bb::numel_of(x), "x, grad_y and grad_x differ in size");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each_row(rows, SoftmaxBackwardRow<T>{static_cast<const T*>(x.data), static_cast<const T*>(g.data), static_cast<T*>(gx.data), cols},
                      stream_of(c), "softmax_backward_reference (CUDA)");
  });
}

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
