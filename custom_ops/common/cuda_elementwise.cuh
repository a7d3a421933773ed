// Element-wise maps for the shipped CUDA kernels (also built for HIP through common/hip_shim):
// out[i] = f(a[i]) or f(a[i], b[i]), computed in float. Each thread moves one 16-byte vector
// of each tensor (4 floats, 8 halves), the shape that reached 96% of the H100's peak in the
// bandwidth table (docs/PERFORMANCE.md); the last n % (16 / sizeof(T)) elements are done one by
// one, and tensors that are not 16-byte aligned go through the scalar kernel.
#pragma once

#include <cstdint>

#include "cuda_types.cuh"

namespace ops {

template <typename T>
inline constexpr int kVecElems = 16 / static_cast<int>(sizeof(T));

template <typename T>
struct alignas(16) Pack {
  T v[kVecElems<T>];
};

template <typename T, typename F>
__global__ void map1_vec_kernel(const T* __restrict__ a, T* __restrict__ out, int64_t n, F f) {
  constexpr int K = kVecElems<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t vectors = n / K;
  if (i < vectors) {
    const Pack<T> pa = reinterpret_cast<const Pack<T>*>(a)[i];
    Pack<T> po;
#pragma unroll
    for (int k = 0; k < K; ++k) po.v[k] = from_float<T>(f(to_float(pa.v[k])));
    reinterpret_cast<Pack<T>*>(out)[i] = po;
  }
  const int64_t tail = vectors * K + i;
  if (tail < n && i < K) out[tail] = from_float<T>(f(to_float(a[tail])));
}

template <typename T, typename F>
__global__ void map2_vec_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int64_t n, F f) {
  constexpr int K = kVecElems<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t vectors = n / K;
  if (i < vectors) {
    const Pack<T> pa = reinterpret_cast<const Pack<T>*>(a)[i];
    const Pack<T> pb = reinterpret_cast<const Pack<T>*>(b)[i];
    Pack<T> po;
#pragma unroll
    for (int k = 0; k < K; ++k) po.v[k] = from_float<T>(f(to_float(pa.v[k]), to_float(pb.v[k])));
    reinterpret_cast<Pack<T>*>(out)[i] = po;
  }
  const int64_t tail = vectors * K + i;
  if (tail < n && i < K) out[tail] = from_float<T>(f(to_float(a[tail]), to_float(b[tail])));
}

template <typename T, typename F>
__global__ void map1_scalar_kernel(const T* __restrict__ a, T* __restrict__ out, int64_t n, F f) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from_float<T>(f(to_float(a[i])));
}

template <typename T, typename F>
__global__ void map2_scalar_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int64_t n, F f) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from_float<T>(f(to_float(a[i]), to_float(b[i])));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline unsigned blocks_for(int64_t items, int threads) { return static_cast<unsigned>((items + threads - 1) / threads); }

// out = f(a), on `stream`.
template <typename T, typename F>
void map1(const T* a, T* out, int64_t n, F f, cudaStream_t stream) {
  constexpr int threads = 256;
  if (n <= 0) return;
  if (aligned16(a) && aligned16(out)) {
    const int64_t vectors = n / kVecElems<T>;
    map1_vec_kernel<T><<<blocks_for(vectors > 0 ? vectors : 1, threads), threads, 0, stream>>>(a, out, n, f);
  } else {
    map1_scalar_kernel<T><<<blocks_for(n, threads), threads, 0, stream>>>(a, out, n, f);
  }
}

// out = f(a, b), on `stream`.
template <typename T, typename F>
void map2(const T* a, const T* b, T* out, int64_t n, F f, cudaStream_t stream) {
  constexpr int threads = 256;
  if (n <= 0) return;
  if (aligned16(a) && aligned16(b) && aligned16(out)) {
    const int64_t vectors = n / kVecElems<T>;
    map2_vec_kernel<T><<<blocks_for(vectors > 0 ? vectors : 1, threads), threads, 0, stream>>>(a, b, out, n, f);
  } else {
    map2_scalar_kernel<T><<<blocks_for(n, threads), threads, 0, stream>>>(a, b, out, n, f);
  }
}

// Calls f(T{}) for float32, float16 and bfloat16 (the library's element-wise dtypes).
template <typename F>
void dispatch_cuda_16_32(DLDataType t, F&& f) {
  if (bb::same_dtype(t, bb::dtype_of<double>())) throw bb::Error("float64 is not supported", BB_ERR_UNSUPPORTED);
  dispatch_cuda_floating(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) f(tag);
  });
}

}  // namespace ops
