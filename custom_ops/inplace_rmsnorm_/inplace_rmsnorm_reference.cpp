// The trusted reference of inplace_rmsnorm_, in double precision, written over x.
#include "../common/reference_devices.hpp"

#include <cmath>
#include <vector>

namespace ops {
void inplace_rmsnorm_reference_cuda(bb::Call& c);  // inplace_rmsnorm_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::inplace_rmsnorm_reference_cuda(c);
#endif
  const double eps = c.attr<double>("eps", 1e-6);
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.output<T>("x_out");  // the same buffer as input x
    auto w = c.input<T>("weight");
    const int64_t cols = x.size(-1);
    BB_CHECK(w.numel() == cols, "weight must have as many elements as x's last dimension");
    const int64_t rows = cols ? x.numel() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < cols; ++i) ss += static_cast<double>(x[r * cols + i]) * static_cast<double>(x[r * cols + i]);
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i) x[r * cols + i] = static_cast<T>(static_cast<double>(x[r * cols + i]) * inv * static_cast<double>(w[i]));
    }
  });
}
}  // namespace

BB_REFERENCE(inplace_rmsnorm_, reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
