// The reference of mul3 and mul4 on a CUDA device: output = input * K in double precision, as
// mul_by_constant.hpp's CPU version (cuda_reference.cuh). Each op's <op>_reference_cuda.cu
// instantiates its K.
#pragma once

#include "cuda_reference.cuh"
#include "mul_by_constant.hpp"

namespace ops {

template <typename T>
struct TimesConstant {
  const T* in;
  T* out;
  double k;
  __device__ void operator()(int64_t i) const { ref::store(out, i, __dmul_rn(ref::load(in, i), k)); }
};

template <int K>
void mul_by_reference_cuda(bb::Call& c) {
  ref::require_all_cuda(c);
  const DLTensor& in = c.input("input");
  DLTensor& out = c.output("output");
  const int64_t n = bb::numel_of(in);
  BB_CHECK(bb::numel_of(out) == n, "input and output differ in size");
  dispatch_cuda_floating(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    ref::for_each(n, TimesConstant<T>{static_cast<const T*>(in.data), static_cast<T*>(out.data), static_cast<double>(K)}, stream_of(c),
                  "mul_by_reference (CUDA)");
  });
}

}  // namespace ops
