// Warp and block sums for the shipped CUDA kernels.
#pragma once

#include <cuda_runtime.h>

namespace ops {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block; every thread gets the result. blockDim.x must be a multiple of 32, at
// most 1024; `scratch` holds 32 floats of shared memory.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads();  // scratch may be reused by the caller
  return v;
}

}  // namespace ops
