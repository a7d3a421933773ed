// softmax on CUDA, one block per row. A row is read from memory once into registers, so the
// maximum, the sum of exponentials and the result come from one read and one write. Rows whose
// length is a multiple of a 16-byte vector (and tensors aligned to one) move in such vectors,
// up to kVecPerThread per thread; other rows of up to kCached elements go element by element;
// longer ones are read again (from L2).
#include <cfloat>

#include "../common/cuda_elementwise.cuh"
#include "../common/cuda_reduce.cuh"
#include "../common/cuda_types.cuh"

namespace {

constexpr int kThreads = 512;
constexpr int kPerThread = 16;  // registers per thread for the row
constexpr int64_t kCached = static_cast<int64_t>(kThreads) * kPerThread;

__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -FLT_MAX;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * cols;
  T* yr = y + blockIdx.x * cols;
  if (cols <= kCached) {
    float v[kPerThread];
    float m = -FLT_MAX;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      v[k] = i < cols ? ops::to_float(xr[i]) : -FLT_MAX;
      m = fmaxf(m, v[k]);
    }
    m = block_max(m, scratch);
    float s = 0;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      v[k] = i < cols ? __expf(v[k] - m) : 0.0f;
      s += v[k];
    }
    const float inv = 1.0f / ops::block_sum(s, scratch);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (i < cols) yr[i] = ops::from_float<T>(v[k] * inv);
    }
    return;
  }
  float m = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, ops::to_float(xr[i]));
  m = block_max(m, scratch);
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) s += __expf(ops::to_float(xr[i]) - m);
  const float inv = 1.0f / ops::block_sum(s, scratch);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) yr[i] = ops::from_float<T>(__expf(ops::to_float(xr[i]) - m) * inv);
}

constexpr int kVecThreads = 256;
constexpr int kVecPerThread = 4;

template <typename T>
__global__ void __launch_bounds__(kVecThreads) softmax_vec_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
  constexpr int K = ops::kVecElems<T>;
  __shared__ float scratch[32];
  const int64_t vectors = cols / K;
  const auto* xr = reinterpret_cast<const ops::Pack<T>*>(x + blockIdx.x * cols);
  auto* yr = reinterpret_cast<ops::Pack<T>*>(y + blockIdx.x * cols);
  float v[kVecPerThread][K];
  float m = -FLT_MAX;
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      const ops::Pack<T> p = xr[i];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        v[j][k] = ops::to_float(p.v[k]);
        m = fmaxf(m, v[j][k]);
      }
    }
  }
  m = block_max(m, scratch);
  float s = 0;
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        v[j][k] = __expf(v[j][k] - m);
        s += v[j][k];
      }
    }
  }
  const float inv = 1.0f / ops::block_sum(s, scratch);
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      ops::Pack<T> p;
#pragma unroll
      for (int k = 0; k < K; ++k) p.v[k] = ops::from_float<T>(v[j][k] * inv);
      yr[i] = p;
    }
  }
}

// The backward, one block per row: y again from x, then y * (grad_y - sum(grad_y * y)). A row
// of up to kCached elements is held in registers (x and grad_y read once); longer ones are read
// again (from L2).
template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_backward_kernel(const T* __restrict__ x, const T* __restrict__ g, T* __restrict__ gx,
                                                                   int64_t cols) {
  constexpr int kPer = kPerThread / 2;  // x and grad_y share the row's registers
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * cols;
  const T* gr = g + blockIdx.x * cols;
  T* out = gx + blockIdx.x * cols;
  if (cols <= static_cast<int64_t>(kThreads) * kPer) {
    float v[kPer], w[kPer];
    float m = -FLT_MAX;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      v[k] = i < cols ? ops::to_float(xr[i]) : -FLT_MAX;
      w[k] = i < cols ? ops::to_float(gr[i]) : 0.0f;
      m = fmaxf(m, v[k]);
    }
    m = block_max(m, scratch);
    float s = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      v[k] = i < cols ? __expf(v[k] - m) : 0.0f;
      s += v[k];
    }
    const float inv = 1.0f / ops::block_sum(s, scratch);
    float dot = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      v[k] *= inv;
      dot += v[k] * w[k];
    }
    dot = ops::block_sum(dot, scratch);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (i < cols) out[i] = ops::from_float<T>(v[k] * (w[k] - dot));
    }
    return;
  }
  float m = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, ops::to_float(xr[i]));
  m = block_max(m, scratch);
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) s += __expf(ops::to_float(xr[i]) - m);
  const float inv = 1.0f / ops::block_sum(s, scratch);
  float dot = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) dot += ops::to_float(gr[i]) * __expf(ops::to_float(xr[i]) - m) * inv;
  dot = ops::block_sum(dot, scratch);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads)
    out[i] = ops::from_float<T>(__expf(ops::to_float(xr[i]) - m) * inv * (ops::to_float(gr[i]) - dot));
}

void softmax_backward(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  ops::require_cuda(x, "x");
  ops::require_cuda(g, "grad_y");
  ops::require_cuda(gx, "grad_x");
  BB_CHECK(bb::numel_of(g) == bb::numel_of(x) && bb::numel_of(gx) == bb::numel_of(x), "x, grad_y and grad_x differ in size");
  BB_CHECK(bb::same_dtype(x.dtype, g.dtype) && bb::same_dtype(x.dtype, gx.dtype), "x, grad_y and grad_x must share a dtype");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  if (rows == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>)
      softmax_backward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ops::stream_of(c)>>>(
          static_cast<const T*>(x.data), static_cast<const T*>(g.data), static_cast<T*>(gx.data), cols);
  });
  ops::check_launch("softmax_cuda (backward)");
}

void softmax(bb::Call& c) {
  const DLTensor& x = c.input("x");
  DLTensor& y = c.output("y");
  ops::require_cuda(x, "x");
  ops::require_cuda(y, "y");
  const int64_t cols = x.ndim ? x.shape[x.ndim - 1] : 1;
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  if (rows == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      constexpr int K = ops::kVecElems<T>;
      if (cols % K == 0 && cols / K <= kVecThreads * kVecPerThread && ops::aligned16(x.data) && ops::aligned16(y.data))
        softmax_vec_kernel<T><<<static_cast<unsigned>(rows), ops::row_block_threads(cols / K, kVecPerThread, kVecThreads), 0,
                                ops::stream_of(c)>>>(static_cast<const T*>(x.data), static_cast<T*>(y.data), cols);
      else
        softmax_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ops::stream_of(c)>>>(static_cast<const T*>(x.data),
                                                                                          static_cast<T*>(y.data), cols);
    }
  });
  ops::check_launch("softmax_cuda");
}

}  // namespace

BB_KERNEL_IMPL(softmax, softmax)
BB_BACKWARD_IMPL(softmax, softmax_backward)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
