// layernorm in C++: float arithmetic, two passes for the statistics, one to normalise.
#include <backendbench/plugin.hpp>

#include <cmath>

namespace {
void layernorm(bb::Call& c) {
  const float eps = c.attr<float>("eps", 1e-5f);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto b = c.input<T>("bias");
    auto y = c.output<T>("y");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols && b.numel() == cols, "weight and bias must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      T* yr = y.data() + r * cols;
      float mean = 0, var = 0;
      for (int64_t i = 0; i < cols; ++i) mean += static_cast<float>(xr[i]);
      mean /= static_cast<float>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const float d = static_cast<float>(xr[i]) - mean;
        var += d * d;
      }
      const float inv = 1.0f / std::sqrt(var / static_cast<float>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i)
        yr[i] = static_cast<T>((static_cast<float>(xr[i]) - mean) * inv * static_cast<float>(w[i]) + static_cast<float>(b[i]));
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(layernorm, layernorm)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
