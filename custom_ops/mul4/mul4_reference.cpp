// The trusted reference of mul4: output = input * 4 in double precision.
#include <backendbench/plugin.hpp>

namespace {
void reference(bb::Call& c) {
  bb::dispatch_floating(c.input("input").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto in = c.input<T>("input");
    auto out = c.output<T>("output");
    BB_CHECK(in.numel() == out.numel(), "input and output differ in size");
    for (int64_t i = 0; i < in.numel(); ++i) out[i] = static_cast<T>(static_cast<double>(in[i]) * 4.0);
  });
}
}  // namespace

BB_REFERENCE(mul4, reference)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float64,float16,bfloat16")
