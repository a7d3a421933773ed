// The trusted reference of layernorm, in double precision (two passes: mean, then variance).
#include "../common/reference_devices.hpp"

#include <cmath>

namespace ops {
void layernorm_reference_cuda(bb::Call& c);  // layernorm_reference_cuda.cu
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
}  // namespace

BB_REFERENCE(layernorm, reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
