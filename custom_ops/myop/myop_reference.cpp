// The trusted reference of myop: y = alpha * x, computed in double precision.
#include <backendbench/plugin.hpp>

namespace {
void reference(bb::Call& c) {
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
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float64,float16,bfloat16")
