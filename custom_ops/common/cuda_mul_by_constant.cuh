// mul3 and mul4 (output = input * K) on CUDA, also built for HIP: one 16-byte vector per thread
// (cuda_elementwise.cuh). Each op's file names its K.
#pragma once

#include <string>

#include "cuda_elementwise.cuh"

namespace ops {

template <int K>
struct Times {
  __device__ float operator()(float a) const { return a * static_cast<float>(K); }
};

template <int K>
void mul_by_cuda(bb::Call& c) {
  const DLTensor& in = c.input("input");
  DLTensor& out = c.output("output");
  require_cuda(in, "input");
  require_cuda(out, "output");
  const int64_t n = bb::numel_of(in);
  BB_CHECK(bb::numel_of(out) == n, "input and output differ in size");
  dispatch_cuda_16_32(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    map1(static_cast<const T*>(in.data), static_cast<T*>(out.data), n, Times<K>{}, stream_of(c));
  });
  check_launch(("mul" + std::to_string(K) + "_cuda").c_str());
}

}  // namespace ops
