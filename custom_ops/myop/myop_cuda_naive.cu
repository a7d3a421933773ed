// myop on CUDA, naive: one thread per element.
#include "../common/cuda_types.cuh"

namespace {

template <typename T>
__global__ void scale_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = ops::from_float<T>(alpha * ops::to_float(x[i]));
}

__global__ void scale_kernel_f64(const double* __restrict__ x, double* __restrict__ y, int64_t n, double alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}

void myop(bb::Call& c) {
  const DLTensor& xt = c.input("x");
  DLTensor& yt = c.output("y");
  ops::require_cuda(xt, "x");
  ops::require_cuda(yt, "y");
  const int64_t n = bb::numel_of(xt);
  const double alpha = c.attr<double>("alpha", 2.0);
  if (n == 0) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  ops::dispatch_cuda_floating(xt.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double>) {
      scale_kernel_f64<<<blocks, threads, 0, ops::stream_of(c)>>>(static_cast<const double*>(xt.data), static_cast<double*>(yt.data), n, alpha);
    } else {
      scale_kernel<T><<<blocks, threads, 0, ops::stream_of(c)>>>(static_cast<const T*>(xt.data), static_cast<T*>(yt.data), n,
                                                                 static_cast<float>(alpha));
    }
  });
  ops::check_launch("myop_cuda_naive");
}

}  // namespace

BB_KERNEL_IMPL(myop, myop)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float64,float16,bfloat16")
