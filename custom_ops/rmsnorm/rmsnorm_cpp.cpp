// rmsnorm in C++: fp32 accumulation, one pass for the sum of squares and one to scale.
#include <backendbench/plugin.hpp>

#include <cmath>

namespace {
void rmsnorm(bb::Call& c) {
  const float eps = static_cast<float>(c.attr<double>("eps", 1e-6));
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto y = c.output<T>("y");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols, "weight must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      T* yr = y.data() + r * cols;
      float ss = 0.f;
      for (int64_t i = 0; i < cols; ++i) {
        const float v = static_cast<float>(xr[i]);
        ss += v * v;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i) yr[i] = static_cast<T>(static_cast<float>(xr[i]) * inv * static_cast<float>(w[i]));
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(rmsnorm, rmsnorm)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
