// The trusted reference of myop: y = alpha * x, computed in double precision (on the CPU, or
// where the buffers are on a CUDA device, by myop_reference_cuda.cu).
#include "../common/reference_devices.hpp"

namespace ops {
void myop_reference_cuda(bb::Call& c);  // myop_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::myop_reference_cuda(c);
#endif
  const double alpha = c.attr<double>("alpha", 2.0);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.output<T>("y");
    BB_CHECK(x.numel() == y.numel(), "x and y differ in size");
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = alpha * static_cast<double>(x[i]);
      if constexpr (std::is_same_v<T, double>) y[i] = v;
      else y[i] = static_cast<T>(static_cast<float>(v));
    }
  });
}
}  // namespace

BB_REFERENCE(myop, reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
