// linear_gelu in C++: a dot product per output (weight rows are contiguous), float
// accumulation, the bias and GELU fused into the same loop.
#include <backendbench/plugin.hpp>

#include <cmath>
#include <vector>

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

// The backward: z again (a dot product per output), dz = grad_out * gelu'(z) kept for the three
// products, then grad_x = dz @ weight (rows of weight added in), grad_weight = dz^T @ x (rows of
// x added in) and grad_bias, the columns of dz summed; in double, as their terms cancel (the huge
// and mixed value variants lost up to 2% of a float sum, and gelu' of a float z more).
void linear_gelu_backward(bb::Call& c) {
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto w = c.input<T>("weight");
    auto b = c.input<T>("bias");
    auto g = c.input<T>("grad_out");
    auto gx = c.output<T>("grad_x");
    auto gw = c.output<T>("grad_weight");
    auto gb = c.output<T>("grad_bias");
    const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
    BB_CHECK(w.size(1) == k && b.numel() == n && g.numel() == m * n, "shapes: x [M, K], weight [N, K], bias [N], grad_out [M, N]");
    const auto at = [](int64_t i) { return static_cast<std::size_t>(i); };
    std::vector<double> dz(at(m * n));
    std::vector<double> acc_x(at(k)), acc_w(at(n * k), 0.0), acc_b(at(n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      const T* xr = x.data() + i * k;
      for (int64_t j = 0; j < n; ++j) {
        const T* wr = w.data() + j * k;
        double z = 0;
        for (int64_t p = 0; p < k; ++p) z += static_cast<double>(xr[p]) * static_cast<double>(wr[p]);
        z += static_cast<double>(b[j]);
        const double cdf = 0.5 * (1.0 + std::erf(z * 0.7071067811865476)), pdf = 0.3989422804014327 * std::exp(-0.5 * z * z);
        dz[at(i * n + j)] = static_cast<double>(g[i * n + j]) * (cdf + z * pdf);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc_x.begin(), acc_x.end(), 0.0);
      const T* xr = x.data() + i * k;
      for (int64_t j = 0; j < n; ++j) {
        const double d = dz[at(i * n + j)];
        const T* wr = w.data() + j * k;
        double* awr = acc_w.data() + j * k;
        for (int64_t p = 0; p < k; ++p) {
          acc_x[at(p)] += d * static_cast<double>(wr[p]);
          awr[p] += d * static_cast<double>(xr[p]);
        }
        acc_b[at(j)] += d;
      }
      for (int64_t p = 0; p < k; ++p) gx[i * k + p] = static_cast<T>(static_cast<float>(acc_x[at(p)]));
    }
    for (int64_t j = 0; j < n; ++j) gb[j] = static_cast<T>(static_cast<float>(acc_b[at(j)]));
    for (int64_t e = 0; e < n * k; ++e) gw[e] = static_cast<T>(static_cast<float>(acc_w[at(e)]));
  });
}
}  // namespace

BB_KERNEL_IMPL(linear_gelu, linear_gelu)
BB_BACKWARD_IMPL(linear_gelu, linear_gelu_backward)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
