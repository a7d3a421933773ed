// RMS normalisation of rows held in registers, shared by rmsnorm_cuda_block and
// inplace_rmsnorm_cuda: one block per row, of as few threads as hold the row in up to
// kRmsVecPerThread 16-byte vectors each (a multiple of 32, at most kRmsVecThreads: small blocks
// put more rows in flight on an SM, which 16-bit rows need to near the peak); each thread loads
// its vectors of the row, the block sums their squares, then each thread scales and writes back the
// very vectors it loaded. Every read of a row ends before the block's barrier in block_sum and
// every write comes after it, and each thread writes only what it read, so y may be x (the
// in-place op): x and y are not __restrict__. Rows must be a multiple of a vector long, at most
// kRmsVecThreads * kRmsVecPerThread vectors, and every tensor 16-byte aligned
// (rms_rows_vectorisable).
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda_elementwise.cuh"
#include "cuda_reduce.cuh"

namespace ops {

constexpr int kRmsVecThreads = 256;
constexpr int kRmsVecPerThread = 4;

template <typename T>
__global__ void __launch_bounds__(kRmsVecThreads) rms_rows_vec_kernel(const T* x, const T* __restrict__ w, T* y, int64_t cols, float eps) {
  constexpr int K = kVecElems<T>;
  __shared__ float scratch[32];
  const int64_t vectors = cols / K;
  const auto* xr = reinterpret_cast<const Pack<T>*>(x + blockIdx.x * cols);
  const auto* wv = reinterpret_cast<const Pack<T>*>(w);
  auto* yr = reinterpret_cast<Pack<T>*>(y + blockIdx.x * cols);
  float v[kRmsVecPerThread][K];
  float ss = 0;
#pragma unroll
  for (int j = 0; j < kRmsVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      const Pack<T> p = xr[i];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        v[j][k] = to_float(p.v[k]);
        ss += v[j][k] * v[j][k];
      }
    }
  }
  const float inv = rsqrtf(block_sum(ss, scratch) / static_cast<float>(cols) + eps);
#pragma unroll
  for (int j = 0; j < kRmsVecPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
    if (i < vectors) {
      const Pack<T> pw = wv[i];
      Pack<T> p;
#pragma unroll
      for (int k = 0; k < K; ++k) p.v[k] = from_float<T>(v[j][k] * inv * to_float(pw.v[k]));
      yr[i] = p;
    }
  }
}

template <typename T>
bool rms_rows_vectorisable(int64_t cols, const void* x, const void* w, const void* y) {
  constexpr int K = kVecElems<T>;
  return cols % K == 0 && cols / K <= static_cast<int64_t>(kRmsVecThreads) * kRmsVecPerThread && aligned16(x) && aligned16(w) &&
         aligned16(y);
}

// Launches the kernel over `rows` rows; false (nothing launched) where the rows do not suit it.
template <typename T>
bool launch_rms_rows_vec(const T* x, const T* w, T* y, int64_t rows, int64_t cols, float eps, cudaStream_t stream) {
  if (!rms_rows_vectorisable<T>(cols, x, w, y)) return false;
  const unsigned threads = row_block_threads(cols / kVecElems<T>, kRmsVecPerThread, kRmsVecThreads);
  rms_rows_vec_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(x, w, y, cols, eps);
  return true;
}

}  // namespace ops
