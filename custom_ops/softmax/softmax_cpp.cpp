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

// The backward in float: y again (a pass for the maximum, one for the sum), then one pass for
// sum(grad_y * y) and one to write y * (grad_y - that sum).
void softmax_backward(bb::Call& c) {
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto g = c.input<T>("grad_y");
    auto gx = c.output<T>("grad_x");
    const int64_t cols = x.ndim() ? x.size(-1) : 1;
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* gr = g.data() + r * cols;
      T* out = gx.data() + r * cols;
      float m = -INFINITY, s = 0, dot = 0;
      for (int64_t i = 0; i < cols; ++i) m = std::max(m, static_cast<float>(xr[i]));
      for (int64_t i = 0; i < cols; ++i) s += std::exp(static_cast<float>(xr[i]) - m);
      const float inv = 1.0f / s;
      for (int64_t i = 0; i < cols; ++i) dot += static_cast<float>(gr[i]) * std::exp(static_cast<float>(xr[i]) - m) * inv;
      for (int64_t i = 0; i < cols; ++i) {
        const float y = std::exp(static_cast<float>(xr[i]) - m) * inv;
        out[i] = static_cast<T>(y * (static_cast<float>(gr[i]) - dot));
      }
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(softmax, softmax)
BB_BACKWARD_IMPL(softmax, softmax_backward)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
