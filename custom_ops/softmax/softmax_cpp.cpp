// softmax in C++: float arithmetic, a pass for the maximum, one for the sum, one to scale.
#include <backendbench/plugin.hpp>

#include <algorithm>
#include <cmath>

namespace {
void softmax(bb::Call& c) {
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.output<T>("y");
    const int64_t cols = x.ndim() ? x.size(-1) : 1;
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      T* yr = y.data() + r * cols;
      float m = -INFINITY, s = 0;
      for (int64_t i = 0; i < cols; ++i) m = std::max(m, static_cast<float>(xr[i]));
      for (int64_t i = 0; i < cols; ++i) s += std::exp(static_cast<float>(xr[i]) - m);
      const float inv = 1.0f / s;
      for (int64_t i = 0; i < cols; ++i) yr[i] = static_cast<T>(std::exp(static_cast<float>(xr[i]) - m) * inv);
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(softmax, softmax)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
