// The trusted reference of vector_add: out = x + y in double precision.
#include "../common/reference_devices.hpp"

namespace ops {
void vector_add_reference_cuda(bb::Call& c);  // vector_add_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::vector_add_reference_cuda(c);
#endif
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.input<T>("y");
    auto out = c.output<T>("out");
    BB_CHECK(x.numel() == y.numel() && x.numel() == out.numel(), "x, y and out differ in size");
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<T>(static_cast<double>(x[i]) + static_cast<double>(y[i]));
  });
}
}  // namespace

BB_REFERENCE(vector_add, reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
