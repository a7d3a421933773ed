// inplace_rmsnorm_ on CUDA, one block per row: the sum of squares, then the row scaled where it
// lies (each thread rewrites only the elements it read). Rows that suit 16-byte vectors are
// held in registers (common/cuda_rms_rows.cuh, which allows its output to be its input).
#include "../common/cuda_reduce.cuh"
#include "../common/cuda_rms_rows.cuh"
#include "../common/cuda_types.cuh"

namespace {

template <typename T>
__global__ void inplace_rmsnorm_kernel(T* __restrict__ x, const T* __restrict__ w, int64_t cols, float eps) {
  __shared__ float scratch[32];
  T* xr = x + blockIdx.x * cols;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const float v = ops::to_float(xr[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(ops::block_sum(ss, scratch) / static_cast<float>(cols) + eps);
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) xr[i] = ops::from_float<T>(ops::to_float(xr[i]) * inv * ops::to_float(w[i]));
}

void inplace_rmsnorm(bb::Call& c) {
  DLTensor& x = c.output("x_out");  // the same buffer as input x
  const DLTensor& w = c.input("weight");
  ops::require_cuda(x, "x");
  ops::require_cuda(w, "weight");
  BB_CHECK(x.ndim >= 1, "x needs at least one dimension");
  const int64_t cols = x.shape[x.ndim - 1];
  BB_CHECK(bb::numel_of(w) == cols, "weight must have as many elements as x's last dimension");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  if (rows == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  const int threads = cols >= 4096 ? 1024 : cols >= 1024 ? 512 : 128;
  const float eps = c.attr<float>("eps", 1e-6f);
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      auto* xs = static_cast<T*>(x.data);
      const auto* ws = static_cast<const T*>(w.data);
      if (!ops::launch_rms_rows_vec<T>(xs, ws, xs, rows, cols, eps, ops::stream_of(c)))
        inplace_rmsnorm_kernel<T><<<static_cast<unsigned>(rows), threads, 0, ops::stream_of(c)>>>(xs, ws, cols, eps);
    }
  });
  ops::check_launch("inplace_rmsnorm_cuda");
}

}  // namespace

BB_KERNEL_IMPL(inplace_rmsnorm_, inplace_rmsnorm)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
