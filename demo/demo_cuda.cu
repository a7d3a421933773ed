// demo on CUDA. Tensors arrive on the device; launch on the stream you are given (work
// elsewhere is caught and is an ERROR) and do not synchronise: the host times the stream.
#include <cuda_runtime.h>

#include <string>

#include <backendbench/plugin.hpp>

namespace {

// --- the kernel ---
__global__ void demo_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int64_t n,
                            float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

void demo(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  BB_CHECK(x.device.device_type == kDLCUDA, "x is not on a CUDA device");
  const int64_t n = bb::numel_of(x);
  if (n == 0) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  demo_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(c.stream())>>>(
      static_cast<const float*>(x.data), static_cast<const float*>(y.data), static_cast<float*>(out.data), n,
      c.attr<float>("alpha", 2.0f));
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw bb::Error(std::string("demo_cuda: ") + cudaGetErrorString(e), BB_ERR_DEVICE);
}

}  // namespace

BB_KERNEL_IMPL(demo, demo)
BB_PLUGIN_INFO("1.0.0", "cuda", "float32")
