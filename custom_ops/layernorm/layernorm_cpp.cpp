// layernorm in C++: float arithmetic, two passes for the statistics, one to normalise.
#include <backendbench/plugin.hpp>

#include <cmath>
#include <vector>

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

// The backward in float: a row's statistics again (two passes), one pass for the sums of
// weight * grad_y and weight * grad_y * xhat, one to write grad_x and add the row's share of
// grad_weight and grad_bias.
void layernorm_backward(bb::Call& c) {
  const float eps = c.attr<float>("eps", 1e-5f);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto g = c.input<T>("grad_y");
    auto gx = c.output<T>("grad_x");
    auto gw = c.output<T>("grad_weight");
    auto gb = c.output<T>("grad_bias");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols, "weight must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    const auto n = static_cast<std::size_t>(cols);
    std::vector<float> acc_w(n, 0.f), acc_b(n, 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* gr = g.data() + r * cols;
      T* out = gx.data() + r * cols;
      float mean = 0, var = 0, a = 0, b = 0;
      for (int64_t i = 0; i < cols; ++i) mean += static_cast<float>(xr[i]);
      mean /= static_cast<float>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const float d = static_cast<float>(xr[i]) - mean;
        var += d * d;
      }
      const float inv = 1.0f / std::sqrt(var / static_cast<float>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i) {
        const float wg = static_cast<float>(w[i]) * static_cast<float>(gr[i]);
        a += wg;
        b += wg * (static_cast<float>(xr[i]) - mean) * inv;
      }
      a /= static_cast<float>(cols);
      b /= static_cast<float>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const float xhat = (static_cast<float>(xr[i]) - mean) * inv, gi = static_cast<float>(gr[i]);
        out[i] = static_cast<T>(inv * (static_cast<float>(w[i]) * gi - a - xhat * b));
        acc_w[static_cast<std::size_t>(i)] += gi * xhat;
        acc_b[static_cast<std::size_t>(i)] += gi;
      }
    }
    for (int64_t i = 0; i < cols; ++i) {
      gw[i] = static_cast<T>(acc_w[static_cast<std::size_t>(i)]);
      gb[i] = static_cast<T>(acc_b[static_cast<std::size_t>(i)]);
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(layernorm, layernorm)
BB_BACKWARD_IMPL(layernorm, layernorm_backward)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
