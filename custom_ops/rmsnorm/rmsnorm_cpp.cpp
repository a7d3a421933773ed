// rmsnorm in C++: fp32 accumulation, one pass for the sum of squares and one to scale.
#include <backendbench/plugin.hpp>

#include <cmath>
#include <vector>

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

// The backward, fp32 accumulation: one pass over a row for its sum of squares and
// sum(weight * grad_y * x), one to write grad_x and add the row's share of grad_weight.
void rmsnorm_backward(bb::Call& c) {
  const float eps = static_cast<float>(c.attr<double>("eps", 1e-6));
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto g = c.input<T>("grad_y");
    auto gx = c.output<T>("grad_x");
    auto gw = c.output<T>("grad_weight");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols, "weight must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    std::vector<float> acc(static_cast<std::size_t>(cols), 0.f), wf(static_cast<std::size_t>(cols));
    for (int64_t i = 0; i < cols; ++i) wf[static_cast<std::size_t>(i)] = static_cast<float>(w[i]);
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* gr = g.data() + r * cols;
      T* gxr = gx.data() + r * cols;
      float ss = 0.f, dot = 0.f;
      for (int64_t i = 0; i < cols; ++i) {
        const float xi = static_cast<float>(xr[i]);
        ss += xi * xi;
        dot += wf[static_cast<std::size_t>(i)] * static_cast<float>(gr[i]) * xi;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
      const float k = inv * inv * inv * dot / static_cast<float>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const float xi = static_cast<float>(xr[i]), gi = static_cast<float>(gr[i]);
        gxr[i] = static_cast<T>(inv * wf[static_cast<std::size_t>(i)] * gi - xi * k);
        acc[static_cast<std::size_t>(i)] += gi * xi * inv;
      }
    }
    for (int64_t i = 0; i < cols; ++i) gw[i] = static_cast<T>(acc[static_cast<std::size_t>(i)]);
  });
}
}  // namespace

BB_KERNEL_IMPL(rmsnorm, rmsnorm)
BB_BACKWARD_IMPL(rmsnorm, rmsnorm_backward)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
