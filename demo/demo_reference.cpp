// The trusted reference of demo: every implementation is checked against it. Plain and
// obviously right beats fast here: double precision, one loop.
#include <backendbench/plugin.hpp>

namespace {
void reference(bb::Call& c) {
  const double alpha = c.attr<double>("alpha", 2.0);
  auto x = c.input<float>("x");
  auto y = c.input<float>("y");
  auto out = c.output<float>("out");
  BB_CHECK(x.numel() == y.numel() && x.numel() == out.numel(), "x, y and out differ in size");
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<float>(alpha * x[i] + y[i]);
}
}  // namespace

BB_REFERENCE(demo, reference)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32")
