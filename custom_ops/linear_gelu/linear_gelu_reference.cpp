// The trusted reference of linear_gelu: out = gelu(x @ weight^T + bias) in double precision,
// with the exact GELU (erf).
#include "../common/reference_devices.hpp"

#include <cmath>
#include <vector>

namespace ops {
void linear_gelu_reference_cuda(bb::Call& c);           // linear_gelu_reference_cuda.cu
void linear_gelu_backward_reference_cuda(bb::Call& c);  // linear_gelu_reference_cuda.cu
}

namespace {
// z[i, j] = bias[j] + the dot product of x's row i and weight's row j, in double, in p's order.
template <typename T>
double pre_activation(const bb::TensorView<const T>& x, const bb::TensorView<const T>& w, const bb::TensorView<const T>& b, int64_t i, int64_t j,
                      int64_t k) {
  double z = static_cast<double>(b[j]);
  for (int64_t p = 0; p < k; ++p) z += static_cast<double>(x[i * k + p]) * static_cast<double>(w[j * k + p]);
  return z;
}

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
        const double z = pre_activation(x, w, b, i, j, k);
        out[i * n + j] = static_cast<T>(0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))));
      }
  });
}

// The backward, in double precision, on the CPU: z = x @ weight^T + bias again, then
//   dz = grad_out * gelu'(z), gelu'(z) = Phi(z) + z phi(z) (the exact GELU's derivative),
//   grad_x = dz @ weight, grad_weight = dz^T @ x, grad_bias = the sum of dz over the rows.
// On a CUDA device: linear_gelu_reference_cuda.cu, the same sums in the same order.
void backward_reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (ops::reference_on_cuda(c)) return ops::linear_gelu_backward_reference_cuda(c);
#endif
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
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double z = pre_activation(x, w, b, i, j, k);
        const double cdf = 0.5 * (1.0 + std::erf(z / std::sqrt(2.0))), pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
        dz[at(i * n + j)] = static_cast<double>(g[i * n + j]) * (cdf + z * pdf);
      }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double acc = 0;
        for (int64_t j = 0; j < n; ++j) acc += dz[at(i * n + j)] * static_cast<double>(w[j * k + p]);
        ops::store_rounded(gx.data(), i * k + p, acc);
      }
    for (int64_t j = 0; j < n; ++j) {
      double bias = 0;
      for (int64_t i = 0; i < m; ++i) bias += dz[at(i * n + j)];
      ops::store_rounded(gb.data(), j, bias);
      for (int64_t p = 0; p < k; ++p) {
        double acc = 0;
        for (int64_t i = 0; i < m; ++i) acc += dz[at(i * n + j)] * static_cast<double>(x[i * k + p]);
        ops::store_rounded(gw.data(), j * k + p, acc);
      }
    }
  });
}
}  // namespace

BB_REFERENCE(linear_gelu, reference)
BB_BACKWARD_REFERENCE(linear_gelu, backward_reference)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
