// vector_add in plain C++: one loop, float arithmetic.
#include <backendbench/plugin.hpp>

namespace {
void vector_add(bb::Call& c) {
  bb::dispatch_floating(c.input("x").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.input<T>("y");
    auto out = c.output<T>("out");
    BB_CHECK(x.numel() == y.numel() && x.numel() == out.numel(), "x, y and out differ in size");
    const T* a = x.data();
    const T* b = y.data();
    T* o = out.data();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = static_cast<T>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
  });
}
}  // namespace

BB_KERNEL_IMPL(vector_add, vector_add)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
