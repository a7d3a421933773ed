// The trusted reference of layernorm, in double precision (two passes: mean, then variance).
#include "../common/reference_devices.hpp"

#include <cmath>
#include <vector>

namespace ops {
void layernorm_reference_cuda(bb::Call& c);           // layernorm_reference_cuda.cu
void layernorm_backward_reference_cuda(bb::Call& c);  // layernorm_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::layernorm_reference_cuda(c);
#endif
  const double eps = c.attr<double>("eps", 1e-5);
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
      double mean = 0, var = 0;
      for (int64_t i = 0; i < cols; ++i) mean += static_cast<double>(x[r * cols + i]);
      mean /= static_cast<double>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const double d = static_cast<double>(x[r * cols + i]) - mean;
        var += d * d;
      }
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i)
        y[r * cols + i] = static_cast<T>((static_cast<double>(x[r * cols + i]) - mean) * inv * static_cast<double>(w[i]) +
                                         static_cast<double>(b[i]));
    }
  });
}

// The backward, in double precision: with xhat = (x - mean) * inv of each row,
//   grad_x = inv * (weight * grad_y - mean(weight * grad_y) - xhat * mean(weight * grad_y * xhat))
//   grad_weight = the sum over rows of grad_y * xhat, grad_bias the sum over rows of grad_y.
void backward_reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::layernorm_backward_reference_cuda(c);
#endif
  const double eps = c.attr<double>("eps", 1e-5);
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
    std::vector<double> acc_w(static_cast<std::size_t>(cols), 0.0), acc_b(static_cast<std::size_t>(cols), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* gr = g.data() + r * cols;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < cols; ++i) mean += static_cast<double>(xr[i]);
      mean /= static_cast<double>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const double d = static_cast<double>(xr[i]) - mean;
        var += d * d;
      }
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(cols) + eps);
      double a = 0, b = 0;  // sums of weight * grad_y and of weight * grad_y * xhat
      for (int64_t i = 0; i < cols; ++i) {
        const double wg = static_cast<double>(w[i]) * static_cast<double>(gr[i]);
        a += wg;
        b += wg * ((static_cast<double>(xr[i]) - mean) * inv);
      }
      a /= static_cast<double>(cols);
      b /= static_cast<double>(cols);
      for (int64_t i = 0; i < cols; ++i) {
        const double xhat = (static_cast<double>(xr[i]) - mean) * inv, gi = static_cast<double>(gr[i]);
        ops::store_rounded(gx.data(), r * cols + i, inv * (static_cast<double>(w[i]) * gi - a - xhat * b));
        acc_w[static_cast<std::size_t>(i)] += gi * xhat;
        acc_b[static_cast<std::size_t>(i)] += gi;
      }
    }
    for (int64_t i = 0; i < cols; ++i) {
      ops::store_rounded(gw.data(), i, acc_w[static_cast<std::size_t>(i)]);
      ops::store_rounded(gb.data(), i, acc_b[static_cast<std::size_t>(i)]);
    }
  });
}
}  // namespace

BB_REFERENCE(layernorm, reference)
BB_BACKWARD_REFERENCE(layernorm, backward_reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
