// mul4 in plain C++ (ExecuTorch's portable kernel does the same loop).
#include <backendbench/plugin.hpp>

namespace {
void mul4(bb::Call& c) {
  bb::dispatch_floating(c.input("input").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto in = c.input<T>("input");
    auto out = c.output<T>("output");
    BB_CHECK(in.numel() == out.numel(), "input and output differ in size");
    const T* a = in.data();
    T* o = out.data();
    for (int64_t i = 0, n = in.numel(); i < n; ++i) o[i] = static_cast<T>(static_cast<float>(a[i]) * 4.0f);
  });
}
}  // namespace

BB_KERNEL_IMPL(mul4, mul4)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
