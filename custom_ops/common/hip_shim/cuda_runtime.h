// HIP shim: lets the shipped CUDA kernels (.cu) compile with hipcc for AMD GPUs. Only what
// those kernels use is mapped. Put this folder first on hipcc's include path.
#pragma once
#include <hip/hip_runtime.h>

#define BB_GPU_DEVICE "hip"
#define BB_GPU_DLPACK_DEVICE kDLROCM

#define cudaStream_t hipStream_t
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetDevice hipGetDevice
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaMalloc hipMalloc
#define cudaFree hipFree

// HIP 5.2 has no *_sync shuffles; AMD wavefronts execute in lockstep, so the mask has no use.
#define __shfl_xor_sync(mask, value, offset) __shfl_xor((value), (offset))
