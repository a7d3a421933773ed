// linear_gelu in C++: a dot product per output (weight rows are contiguous), float
// accumulation, the bias and GELU fused into the same loop.
#include <backendbench/plugin.hpp>

#include <cmath>

namespace {
void linear_gelu(bb::Call& c) {
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto b = c.input<T>("bias");
    auto out = c.output<T>("out");
    const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
    BB_CHECK(w.size(1) == k && b.numel() == n && out.numel() == m * n, "shapes: x [M, K], weight [N, K], bias [N], out [M, N]");
    for (int64_t i = 0; i < m; ++i) {
      const T* xr = x.data() + i * k;
      for (int64_t j = 0; j < n; ++j) {
        const T* wr = w.data() + j * k;
        float acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += static_cast<float>(xr[p]) * static_cast<float>(wr[p]);
        acc += static_cast<float>(b[j]);
        out[i * n + j] = static_cast<T>(0.5f * acc * (1.0f + std::erf(acc * 0.70710678f)));
      }
    }
  });
}
}  // namespace

BB_KERNEL_IMPL(linear_gelu, linear_gelu)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
