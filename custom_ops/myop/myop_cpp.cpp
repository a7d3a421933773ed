// myop in plain C++: one scalar loop per dtype.
#include <backendbench/plugin.hpp>

namespace {
void myop(bb::Call& c) {
  const double alpha = c.attr<double>("alpha", 2.0);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.output<T>("y");
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = alpha * x[i];
    } else {
      const float a = static_cast<float>(alpha);
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = static_cast<T>(a * static_cast<float>(x[i]));
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(myop, myop)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float64,float16,bfloat16")
