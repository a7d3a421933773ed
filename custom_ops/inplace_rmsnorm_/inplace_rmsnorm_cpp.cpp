// inplace_rmsnorm_ in C++: float accumulation; the row is read for its sum of squares, then
// scaled where it lies.
#include <backendbench/plugin.hpp>

#include <cmath>

namespace {
void inplace_rmsnorm(bb::Call& c) {
  const float eps = c.attr<float>("eps", 1e-6f);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.output<T>("x_out");  // the same buffer as input x
    auto w = c.input<T>("weight");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols, "weight must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      T* xr = x.data() + r * cols;
      float ss = 0;
      for (int64_t i = 0; i < cols; ++i) ss += static_cast<float>(xr[i]) * static_cast<float>(xr[i]);
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i) xr[i] = static_cast<T>(static_cast<float>(xr[i]) * inv * static_cast<float>(w[i]));
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(inplace_rmsnorm_, inplace_rmsnorm)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
