// layernorm on CUDA, one block per row. A row is read once into registers: mean, then the
// variance around it (two passes over registers, not over memory), then the result. Rows whose
// length is a multiple of a 16-byte vector (and tensors aligned to one) move in such vectors, up
// to kVecPerThread per thread; other rows of up to kCached elements go element by element;
// longer ones are read again.
#include "../common/cuda_column_shares.cuh"
#include "../common/cuda_elementwise.cuh"
#include "../common/cuda_reduce.cuh"
#include "../common/cuda_types.cuh"

namespace {

constexpr int kThreads = 512;
constexpr int kPerThread = 16;
constexpr int64_t kCached = static_cast<int64_t>(kThreads) * kPerThread;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y, int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * cols;
  T* yr = y + blockIdx.x * cols;
  const float n = static_cast<float>(cols);
  if (cols <= kCached) {
    float v[kPerThread];
    float s = 0;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      v[k] = i < cols ? ops::to_float(xr[i]) : 0.0f;
      s += v[k];
    }
    const float mean = ops::block_sum(s, scratch) / n;
    float q = 0;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      const float d = i < cols ? v[k] - mean : 0.0f;
      q += d * d;
    }
    const float inv = rsqrtf(ops::block_sum(q, scratch) / n + eps);
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (i < cols) yr[i] = ops::from_float<T>((v[k] - mean) * inv * ops::to_float(w[i]) + ops::to_float(b[i]));
    }
    return;
  }
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) s += ops::to_float(xr[i]);
  const float mean = ops::block_sum(s, scratch) / n;
  float q = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    const float d = ops::to_float(xr[i]) - mean;
    q += d * d;
  }
  const float inv = rsqrtf(ops::block_sum(q, scratch) / n + eps);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads)
    yr[i] = ops::from_float<T>((ops::to_float(xr[i]) - mean) * inv * ops::to_float(w[i]) + ops::to_float(b[i]));
}

constexpr int kVecThreads = 256;
constexpr int kVecPerThread = 4;

template <typename T>
__global__ void __launch_bounds__(kVecThreads) layernorm_vec_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                                                    T* __restrict__ y, int64_t cols, float eps) {
  constexpr int K = ops::kVecElems<T>;
  __shared__ float scratch[32];
  const int64_t vectors = cols / K;
  const auto* xr = reinterpret_cast<const ops::Pack<T>*>(x + blockIdx.x * cols);
  const auto* wv = reinterpret_cast<const ops::Pack<T>*>(w);
  const auto* bv = reinterpret_cast<const ops::Pack<T>*>(b);
  auto* yr = reinterpret_cast<ops::Pack<T>*>(y + blockIdx.x * cols);
  const float n = static_cast<float>(cols);
  float v[kVecPerThread][K];
  float s = 0;
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      const ops::Pack<T> p = xr[i];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        v[j][k] = ops::to_float(p.v[k]);
        s += v[j][k];
      }
    }
  }
  const float mean = ops::block_sum(s, scratch) / n;
  float q = 0;
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const float d = v[j][k] - mean;
        q += d * d;
      }
    }
  }
  const float inv = rsqrtf(ops::block_sum(q, scratch) / n + eps);
#pragma unroll
  for (int j = 0; j < kVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      const ops::Pack<T> pw = wv[i], pb = bv[i];
      ops::Pack<T> p;
#pragma unroll
      for (int k = 0; k < K; ++k) p.v[k] = ops::from_float<T>((v[j][k] - mean) * inv * ops::to_float(pw.v[k]) + ops::to_float(pb.v[k]));
      yr[i] = p;
    }
  }
}

void layernorm(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& b = c.input("bias");
  DLTensor& y = c.output("y");
  for (const DLTensor* t : {&x, &w, &b, static_cast<const DLTensor*>(&y)}) ops::require_cuda(*t, "x, weight, bias and y");
  BB_CHECK(x.ndim >= 1, "x needs at least one dimension");
  const int64_t cols = x.shape[x.ndim - 1];
  BB_CHECK(bb::numel_of(w) == cols && bb::numel_of(b) == cols, "weight and bias must have as many elements as x's last dimension");
  const int64_t rows = cols ? bb::numel_of(x) / cols : 0;
  if (rows == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  const float eps = c.attr<float>("eps", 1e-5f);
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      constexpr int K = ops::kVecElems<T>;
      const bool vec = cols % K == 0 && cols / K <= kVecThreads * kVecPerThread && ops::aligned16(x.data) && ops::aligned16(w.data) &&
                       ops::aligned16(b.data) && ops::aligned16(y.data);
      if (vec)
        layernorm_vec_kernel<T><<<static_cast<unsigned>(rows), ops::row_block_threads(cols / K, kVecPerThread, kVecThreads), 0,
                                  ops::stream_of(c)>>>(
            static_cast<const T*>(x.data), static_cast<const T*>(w.data), static_cast<const T*>(b.data), static_cast<T*>(y.data), cols, eps);
      else
        layernorm_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ops::stream_of(c)>>>(
            static_cast<const T*>(x.data), static_cast<const T*>(w.data), static_cast<const T*>(b.data), static_cast<T*>(y.data), cols, eps);
    }
  });
  ops::check_launch("layernorm_cuda");
}

// The backward. A block takes a run of rows: for each, its mean and inv again, the sums of
// weight * grad_y and weight * grad_y * xhat, then grad_x, adding the row's grad_y * xhat and
// grad_y to the block's shares of grad_weight and grad_bias (in shared memory where both fit,
// else in its rows of `partials`: common/cuda_column_shares.cuh).
template <typename T>
__global__ void layernorm_backward_rows(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ g, T* __restrict__ gx,
                                        float* __restrict__ partials, int64_t rows, int64_t cols, float eps, bool shared_share) {
  extern __shared__ float share_smem[];
  __shared__ float scratch[32];
  float* share_w = shared_share ? share_smem : partials + 2 * blockIdx.x * cols;
  float* share_b = share_w + cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) share_w[i] = share_b[i] = 0.0f;
  int64_t first = 0, last = 0;
  ops::block_rows(rows, first, last);
  const float n = static_cast<float>(cols);
  for (int64_t r = first; r < last; ++r) {
    const T* xr = x + r * cols;
    const T* gr = g + r * cols;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum += ops::to_float(xr[i]);
    const float mean = ops::block_sum(sum, scratch) / n;
    float var = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float d = ops::to_float(xr[i]) - mean;
      var += d * d;
    }
    const float inv = rsqrtf(ops::block_sum(var, scratch) / n + eps);
    float a = 0.0f, b = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float wg = ops::to_float(w[i]) * ops::to_float(gr[i]);
      a += wg;
      b += wg * (ops::to_float(xr[i]) - mean) * inv;
    }
    a = ops::block_sum(a, scratch) / n;
    b = ops::block_sum(b, scratch) / n;
    T* out = gx + r * cols;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const float xhat = (ops::to_float(xr[i]) - mean) * inv, gi = ops::to_float(gr[i]);
      out[i] = ops::from_float<T>(inv * (ops::to_float(w[i]) * gi - a - xhat * b));
      share_w[i] += gi * xhat;
      share_b[i] += gi;
    }
  }
  if (shared_share)
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      partials[2 * blockIdx.x * cols + i] = share_w[i];
      partials[(2 * blockIdx.x + 1) * cols + i] = share_b[i];
    }
}

void layernorm_backward(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& w = c.input("weight");
  const DLTensor& g = c.input("grad_y");
  DLTensor& gx = c.output("grad_x");
  DLTensor& gw = c.output("grad_weight");
  DLTensor& gb = c.output("grad_bias");
  for (const DLTensor* t : {&x, &w, &g, static_cast<const DLTensor*>(&gx), static_cast<const DLTensor*>(&gw), static_cast<const DLTensor*>(&gb)})
    ops::require_cuda(*t, "x, weight, grad_y and the gradients");
  BB_CHECK(x.ndim >= 1, "x needs at least one dimension");
  const int64_t cols = x.shape[x.ndim - 1];
  BB_CHECK(bb::numel_of(w) == cols && bb::numel_of(gw) == cols && bb::numel_of(gb) == cols,
           "weight, grad_weight and grad_bias must have as many elements as x's last dimension");
  BB_CHECK(bb::numel_of(g) == bb::numel_of(x) && bb::numel_of(gx) == bb::numel_of(x), "x, grad_y and grad_x differ in size");
  for (const DLTensor* t : {&w, &g, static_cast<const DLTensor*>(&gx), static_cast<const DLTensor*>(&gw), static_cast<const DLTensor*>(&gb)})
    BB_CHECK(bb::same_dtype(x.dtype, t->dtype), "every tensor must have x's dtype");
  if (cols == 0) return;
  if (bb::same_dtype(x.dtype, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  const int64_t rows = bb::numel_of(x) / cols;
  const float eps = c.attr<float>("eps", 1e-5f);
  const cudaStream_t stream = ops::stream_of(c);
  const int threads = cols >= 4096 ? 1024 : cols >= 1024 ? 512 : 128;
  const int blocks = ops::share_blocks(rows, threads);
  float* partials = ops::share_buffer(static_cast<std::size_t>(blocks) * 2 * static_cast<std::size_t>(cols));
  const std::size_t share_bytes = 2 * static_cast<std::size_t>(cols) * sizeof(float);
  const bool shared_share = share_bytes <= 32 * 1024;
  ops::dispatch_cuda_floating(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      layernorm_backward_rows<T><<<static_cast<unsigned>(blocks), threads, shared_share ? share_bytes : 0, stream>>>(
          static_cast<const T*>(x.data), static_cast<const T*>(w.data), static_cast<const T*>(g.data), static_cast<T*>(gx.data), partials, rows,
          cols, eps, shared_share);
      const int used = rows == 0 ? 0 : blocks;
      ops::column_sums<T>(partials, used, 2 * cols, static_cast<T*>(gw.data), cols, stream);
      ops::column_sums<T>(partials + cols, used, 2 * cols, static_cast<T*>(gb.data), cols, stream);
    }
  });
  ops::check_launch("layernorm_cuda (backward)");
}

}  // namespace

BB_KERNEL_IMPL(layernorm, layernorm)
BB_BACKWARD_IMPL(layernorm, layernorm_backward)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
