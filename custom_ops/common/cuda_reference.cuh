// The shipped references on a CUDA device (<op>_reference_cuda.cu): the arithmetic of their CPU
// versions (<op>_reference.cpp), in double precision, each result rounded to the output's type as
// the CPU's is (double to float, then to a 16-bit type, to nearest even). Products and sums use
// __dmul_rn / __dadd_rn, never a fused multiply-add the CPU's build does not make, so an
// element-wise result and a dot product summed in the CPU's order are the CPU's bits; a row's
// reduction is summed in another order (to about 1e-15 of it).
//
// Built into the reference's own library beside its CPU code (custom_ops/CMakeLists.txt,
// shipped_reference), so the reference of a CUDA test computes where the test's buffers are: no
// upload of a 64M-element case to the host and back for every checked call.
#pragma once

#include <cstdint>

#include "cuda_types.cuh"

namespace ops::ref {

// An element as double.
template <typename T> __device__ __forceinline__ double load(const T* p, int64_t i) { return static_cast<double>(to_float(p[i])); }
template <> __device__ __forceinline__ double load<double>(const double* p, int64_t i) { return p[i]; }

// A double result stored as the CPU's static_cast<T>(double) stores it.
template <typename T> __device__ __forceinline__ void store(T* p, int64_t i, double v) { p[i] = from_float<T>(static_cast<float>(v)); }
template <> __device__ __forceinline__ void store<double>(double* p, int64_t i, double v) { p[i] = v; }

// f(i) for every i < n, a grid-stride loop.
template <typename F>
__global__ void each_kernel(int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

template <typename F>
void for_each(int64_t n, F f, cudaStream_t stream, const char* what) {
  if (n <= 0) return;
  constexpr int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  each_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0, stream>>>(n, f);
  check_launch(what);
}

// f(row) for every row < rows, one block of `kRowThreads` threads per row.
constexpr int kRowThreads = 256;

template <typename F>
__global__ void rows_kernel(int64_t rows, F f) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) f(r);
}

template <typename F>
void for_each_row(int64_t rows, F f, cudaStream_t stream, const char* what) {
  if (rows <= 0) return;
  rows_kernel<<<static_cast<unsigned>(rows < 65536 ? rows : 65536), kRowThreads, 0, stream>>>(rows, f);
  check_launch(what);
}

// The block's sum (or maximum) of one value per thread; every thread gets it. Called by every
// thread of a kRowThreads block, which it synchronises.
__device__ __forceinline__ double warp_reduce(double v, bool max) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const double o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = max ? fmax(v, o) : __dadd_rn(v, o);
  }
  return v;
}

__device__ __forceinline__ double block_reduce(double v, bool max) {
  __shared__ double scratch[kRowThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce(v, max);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < kRowThreads / 32 ? scratch[lane] : (max ? -INFINITY : 0.0);
  v = warp_reduce(v, max);
  __syncthreads();  // scratch is used again by the next reduction
  return v;
}

__device__ __forceinline__ double block_sum(double v) { return block_reduce(v, false); }
__device__ __forceinline__ double block_max(double v) { return block_reduce(v, true); }

// Every tensor of a call on the CUDA device, or an error that names the first that is not.
inline void require_all_cuda(const bb::Call& c) {
  for (int i = 0; i < c.num_inputs(); ++i) require_cuda(c.input(i), "an input");
  for (int i = 0; i < c.num_outputs(); ++i) require_cuda(c.output(i), "an output");
}

}  // namespace ops::ref
