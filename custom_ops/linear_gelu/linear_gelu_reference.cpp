// The trusted reference of linear_gelu: out = gelu(x @ weight^T + bias) in double precision,
// with the exact GELU (erf).
#include "../common/reference_devices.hpp"

#include <cmath>

namespace ops {
void linear_gelu_reference_cuda(bb::Call& c);  // linear_gelu_reference_cuda.cu
}

namespace {
void reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::linear_gelu_reference_cuda(c);
#endif
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto b = c.input<T>("bias");
    auto out = c.output<T>("out");
    const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
    BB_CHECK(w.size(1) == k && b.numel() == n && out.numel() == m * n, "shapes: x [M, K], weight [N, K], bias [N], out [M, N]");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = static_cast<double>(b[j]);
        for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(x[i * k + p]) * static_cast<double>(w[j * k + p]);
        out[i * n + j] = static_cast<T>(0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0))));
      }
  });
}
}  // namespace

BB_REFERENCE(linear_gelu, reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
