// demo in plain C++. Your CPU kernel goes in `demo` below; throw bb::Error (or use
// BB_CHECK) to refuse an input, and the run reports it as ERROR with your message.
#include <backendbench/plugin.hpp>

namespace {
void demo(bb::Call& c) {
  const float alpha = c.attr<float>("alpha", 2.0f);
  auto x = c.input<float>("x");
  auto y = c.input<float>("y");
  auto out = c.output<float>("out");
  // --- the kernel ---
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * x[i] + y[i];
}
}  // namespace

BB_KERNEL_IMPL(demo, demo)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32")
