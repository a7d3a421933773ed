// vector_add on CUDA: one 16-byte vector of x, y and out per thread (common/cuda_elementwise.cuh).
#include "../common/cuda_elementwise.cuh"

namespace {

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

void vector_add(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  for (const DLTensor* t : {&x, &y, static_cast<const DLTensor*>(&out)}) ops::require_cuda(*t, "x, y and out");
  const int64_t n = bb::numel_of(x);
  BB_CHECK(bb::numel_of(y) == n && bb::numel_of(out) == n, "x, y and out differ in size");
  ops::dispatch_cuda_16_32(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    ops::map2(static_cast<const T*>(x.data), static_cast<const T*>(y.data), static_cast<T*>(out.data), n, Add{}, ops::stream_of(c));
  });
  ops::check_launch("vector_add_cuda");
}

}  // namespace

BB_KERNEL_IMPL(vector_add, vector_add)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
