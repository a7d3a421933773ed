// The trusted reference of softmax over the last dimension, in double precision.
#include "../common/reference_devices.hpp"

#include <cmath>
#include <vector>

namespace ops {
void softmax_reference_cuda(bb::Call& c);           // softmax_reference_cuda.cu
void softmax_backward_reference_cuda(bb::Call& c);  // softmax_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::softmax_reference_cuda(c);
#endif
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.output<T>("y");
    const int64_t cols = x.ndim() ? x.size(-1) : 1;
    const int64_t rows = cols ? x.numel() / cols : 0;
    std::vector<double> e(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < cols; ++i) m = std::max(m, static_cast<double>(x[r * cols + i]));
      for (int64_t i = 0; i < cols; ++i) s += e[static_cast<size_t>(i)] = std::exp(static_cast<double>(x[r * cols + i]) - m);
      for (int64_t i = 0; i < cols; ++i) y[r * cols + i] = static_cast<T>(e[static_cast<size_t>(i)] / s);
    }
  });
}

// The backward, in double precision: y computed again from x, then
//   grad_x = y * (grad_y - sum(grad_y * y)) over each row.
void backward_reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::softmax_backward_reference_cuda(c);
#endif
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto g = c.input<T>("grad_y");
    auto gx = c.output<T>("grad_x");
    const int64_t cols = x.ndim() ? x.size(-1) : 1;
    const int64_t rows = cols ? x.numel() / cols : 0;
    std::vector<double> y(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0, dot = 0;
      for (int64_t i = 0; i < cols; ++i) m = std::max(m, static_cast<double>(x[r * cols + i]));
      for (int64_t i = 0; i < cols; ++i) s += y[static_cast<size_t>(i)] = std::exp(static_cast<double>(x[r * cols + i]) - m);
      for (int64_t i = 0; i < cols; ++i) {
        y[static_cast<size_t>(i)] /= s;
        dot += static_cast<double>(g[r * cols + i]) * y[static_cast<size_t>(i)];
      }
      for (int64_t i = 0; i < cols; ++i)
        gx[r * cols + i] = static_cast<T>(y[static_cast<size_t>(i)] * (static_cast<double>(g[r * cols + i]) - dot));
    }
  });
}
}  // namespace

BB_REFERENCE(softmax, reference)
BB_BACKWARD_REFERENCE(softmax, backward_reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
