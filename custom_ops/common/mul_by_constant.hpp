// ExecuTorch's out-variant examples mul3 and mul4 (output = input * K) differ only in K: their
// reference and plain C++ kernel are written once here, and each op's files name its K.
#pragma once

#include "reference_devices.hpp"

namespace ops {

#ifdef BB_REFERENCE_CUDA
template <int K>
void mul_by_reference_cuda(bb::Call& c);  // cuda_mul_by_constant_reference.cuh, instantiated by <op>_reference_cuda.cu
#endif

// The trusted reference: output = input * K in double precision (on a CUDA device where the
// buffers are there and the build has CUDA).
template <int K>
void mul_by_reference(bb::Call& c) {
#ifdef BB_REFERENCE_CUDA
  if (reference_on_cuda(c)) return mul_by_reference_cuda<K>(c);
#endif
  bb::dispatch_floating(c.input("input").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto in = c.input<T>("input");
    auto out = c.output<T>("output");
    BB_CHECK(in.numel() == out.numel(), "input and output differ in size");
    for (int64_t i = 0; i < in.numel(); ++i) out[i] = static_cast<T>(static_cast<double>(in[i]) * K);
  });
}

// The kernel in plain C++, in float (ExecuTorch's portable kernel does the same loop).
template <int K>
void mul_by_cpp(bb::Call& c) {
  bb::dispatch_floating(c.input("input").dtype, [&](auto tag) {
    using T = decltype(tag);
    auto in = c.input<T>("input");
    auto out = c.output<T>("output");
    BB_CHECK(in.numel() == out.numel(), "input and output differ in size");
    const T* a = in.data();
    T* o = out.data();
    for (int64_t i = 0, n = in.numel(); i < n; ++i) o[i] = static_cast<T>(static_cast<float>(a[i]) * static_cast<float>(K));
  });
}

}  // namespace ops
