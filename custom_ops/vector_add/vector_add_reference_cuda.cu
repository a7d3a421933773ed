// vector_add's reference on a CUDA device: out = x + y in double precision, as vector_add_reference.cpp.
#include "../common/cuda_reference.cuh"

namespace ops {
namespace {
template <typename T>
struct Add {
  const T* x;
  const T* y;
  T* out;
  __device__ void operator()(int64_t i) const { ref::store(out, i, __dadd_rn(ref::load(x, i), ref::load(y, i))); }
};
}  // namespace

void vector_add_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  const int64_t n = bb::numel_of(x);
  BB_CHECK(bb::numel_of(y) == n && bb::numel_of(out) == n, "x, y and out differ in size");
  dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each(n, Add<T>{static_cast<const T*>(x.data), static_cast<const T*>(y.data), static_cast<T*>(out.data)}, stream_of(c),
                  "vector_add_reference (CUDA)");
  });
}
}  // namespace ops
