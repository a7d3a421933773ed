// HIP shim for <cuda_bf16.h>: HIP 5.2's bfloat16 is hip_bfloat16, converting through float with
// round-to-nearest-even.
#pragma once
#include <hip/hip_bfloat16.h>

typedef hip_bfloat16 __nv_bfloat16;
__host__ __device__ inline float __bfloat162float(hip_bfloat16 v) { return static_cast<float>(v); }
__host__ __device__ inline hip_bfloat16 __float2bfloat16_rn(float v) { return hip_bfloat16(v); }
