// The trusted reference of rmsnorm: double-precision accumulation and scaling.
#include "../common/reference_devices.hpp"

#include <cmath>
#include <vector>

namespace ops {
void rmsnorm_reference_cuda(bb::Call& c);           // rmsnorm_reference_cuda.cu
void rmsnorm_backward_reference_cuda(bb::Call& c);  // rmsnorm_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::rmsnorm_reference_cuda(c);
#endif
  const double eps = c.attr<double>("eps", 1e-6);
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
      double ss = 0;
      for (int64_t i = 0; i < cols; ++i) ss += static_cast<double>(xr[i]) * static_cast<double>(xr[i]);
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i) {
        const double v = static_cast<double>(xr[i]) * inv * static_cast<double>(w[i]);
        if constexpr (std::is_same_v<T, double>) yr[i] = v;
        else yr[i] = static_cast<T>(static_cast<float>(v));
      }
    }
  });
}

// The backward, in double precision: with inv = 1 / sqrt(mean(x^2) + eps) of each row,
//   grad_x = inv * weight * grad_y - x * inv^3 * sum(weight * grad_y * x) / cols
//   grad_weight = the sum over rows of grad_y * x * inv.
void backward_reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::rmsnorm_backward_reference_cuda(c);
#endif
  const double eps = c.attr<double>("eps", 1e-6);
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
    std::vector<double> acc(static_cast<std::size_t>(cols), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* gr = g.data() + r * cols;
      double ss = 0, dot = 0;
      for (int64_t i = 0; i < cols; ++i) {
        const double xi = static_cast<double>(xr[i]);
        ss += xi * xi;
        dot += static_cast<double>(w[i]) * static_cast<double>(gr[i]) * xi;
      }
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
      const double k = inv * inv * inv * dot / static_cast<double>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const double xi = static_cast<double>(xr[i]), gi = static_cast<double>(gr[i]);
        ops::store_rounded(gx.data(), r * cols + i, inv * static_cast<double>(w[i]) * gi - xi * k);
        acc[static_cast<std::size_t>(i)] += gi * xi * inv;
      }
    }
    for (int64_t i = 0; i < cols; ++i) ops::store_rounded(gw.data(), i, acc[static_cast<std::size_t>(i)]);
  });
}
}  // namespace

BB_REFERENCE(rmsnorm, reference)
BB_BACKWARD_REFERENCE(rmsnorm, backward_reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "")
