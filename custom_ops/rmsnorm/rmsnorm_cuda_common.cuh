// Host side shared by the rmsnorm CUDA kernels: argument checks and dtype dispatch.
#pragma once

#include "../common/cuda_types.cuh"

namespace rmsnorm_cuda {

struct Args {
  const void* x;
  const void* w;
  void* y;
  int64_t rows, cols;
  float eps;
  cudaStream_t stream;
  DLDataType dtype;
};

inline Args args_of(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  DLTensor& y = c.output("y");
  ops::require_cuda(x, "x");
  ops::require_cuda(w, "weight");
  ops::require_cuda(y, "y");
  BB_CHECK(x.ndim >= 1, "x needs at least one dimension");
  const int64_t cols = x.shape[x.ndim - 1];
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  BB_CHECK(bb::same_dtype(x.dtype, w.dtype) && bb::same_dtype(x.dtype, y.dtype), "x, weight and y must share a dtype");
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  return Args{x.data, w.data, y.data, cols ? bb::numel_of(x) / cols : 0, cols,
              static_cast<float>(c.attr<double>("eps", 1e-6)), ops::stream_of(c), x.dtype};
}

// The backward's x and weight, as the forward's (its gradients are checked by the caller).
inline Args backward_args_of(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  ops::require_cuda(x, "x");
  ops::require_cuda(w, "weight");
  BB_CHECK(x.ndim >= 1, "x needs at least one dimension");
  const int64_t cols = x.shape[x.ndim - 1];
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  BB_CHECK(bb::same_dtype(x.dtype, w.dtype), "x and weight must share a dtype");
  BB_CHECK(bb::same_dtype(x.dtype, c.input("grad_y").dtype) && bb::same_dtype(x.dtype, c.output("grad_x").dtype) &&
               bb::same_dtype(x.dtype, c.output("grad_weight").dtype),
           "the gradients must have x's dtype");
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  return Args{x.data, w.data, nullptr, cols ? bb::numel_of(x) / cols : 0, cols, static_cast<float>(c.attr<double>("eps", 1e-6)), ops::stream_of(c),
              x.dtype};
}

}  // namespace rmsnorm_cuda
