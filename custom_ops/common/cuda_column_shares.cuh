// Column sums over many rows for the shipped backward kernels (a weight's or a bias's gradient:
// the sum over every row of a product): each block of the rows kernel adds its run of rows into
// a share of its own (a row of `partials`, or shared memory copied there); column_sums adds the
// blocks' shares of each column and writes it in the output's type.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda_types.cuh"

namespace ops {

// Blocks for a rows kernel that keeps a share of its columns each: as many per SM as 2048
// threads make (2 of 1024 threads, 16 of 128), never more than rows, at least one.
inline int share_blocks(int64_t rows, int threads) {
  int sms = 0, device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) sms = 1;
  const int64_t most = static_cast<int64_t>(sms > 0 ? sms : 1) * (2048 / threads);
  return static_cast<int>(rows < 1 ? 1 : rows < most ? rows : most);
}

// The blocks' shares: device memory kept between calls (one process, one call at a time), grown
// when a call needs more.
inline float* share_buffer(std::size_t floats) {
  static float* buffer = nullptr;
  static std::size_t size = 0;
  if (floats > size) {
    if (buffer) (void)cudaFree(buffer);
    buffer = nullptr;
    size = 0;
    BB_CHECK(cudaMalloc(&buffer, floats * sizeof(float)) == cudaSuccess, "cannot allocate the column sums' shares");
    size = floats;
  }
  return buffer;
}

// The rows of a block in a rows kernel: [first, last).
__device__ __forceinline__ void block_rows(int64_t rows, int64_t& first, int64_t& last) {
  const int64_t per_block = (rows + gridDim.x - 1) / gridDim.x;
  first = blockIdx.x * per_block;
  last = first + per_block < rows ? first + per_block : rows;
}

// out[i] = the sum over `blocks` shares (each `cols` floats, `stride` apart) of column i.
template <typename T>
__global__ void column_sums_kernel(const float* __restrict__ partials, int blocks, int64_t stride, T* __restrict__ out, int64_t cols) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= cols) return;
  float acc = 0.0f;
  for (int b = 0; b < blocks; ++b) acc += partials[b * stride + i];
  out[i] = from_float<T>(acc);
}
template <typename T>
void column_sums(const float* partials, int blocks, int64_t stride, T* out, int64_t cols, cudaStream_t stream) {
  if (cols > 0) column_sums_kernel<T><<<static_cast<unsigned>((cols + 255) / 256), 256, 0, stream>>>(partials, blocks, stride, out, cols);
}

}  // namespace ops
