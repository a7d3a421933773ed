// Element types of the shipped CUDA kernels (also built for HIP through common/hip_shim): float, double, __half, __nv_bfloat16, with float
// conversions that round to nearest even, and host-side dispatch from a DLPack dtype.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <backendbench/plugin.hpp>

// The device these kernels are built for: CUDA, or HIP through common/hip_shim.
#ifndef BB_GPU_DEVICE
#define BB_GPU_DEVICE "cuda"
#define BB_GPU_DLPACK_DEVICE kDLCUDA
#endif

namespace ops {

template <typename T> __device__ __forceinline__ float to_float(T v) { return static_cast<float>(v); }
template <> __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Calls f(T{}) with T the CUDA storage type of a floating dtype.
template <typename F>
void dispatch_cuda_floating(DLDataType t, F&& f) {
  if (bb::same_dtype(t, bb::dtype_of<float>())) return f(float{});
  if (bb::same_dtype(t, bb::dtype_of<double>())) return f(double{});
  if (bb::same_dtype(t, bb::dtype_of<bb::half>())) return f(__half{});
  if (bb::same_dtype(t, bb::dtype_of<bb::bfloat16>())) return f(__nv_bfloat16{});
  throw bb::Error(std::string("unsupported dtype ") + bb::dtype_name(t), BB_ERR_UNSUPPORTED);
}

inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw bb::Error(std::string(what) + ": " + cudaGetErrorString(e), BB_ERR_DEVICE);
}

inline cudaStream_t stream_of(const bb::Call& c) { return static_cast<cudaStream_t>(c.stream()); }

inline void require_cuda(const DLTensor& t, const char* name) {
  if (t.device.device_type != BB_GPU_DLPACK_DEVICE)
    throw bb::Error(std::string("tensor '") + name + "' is not on a " BB_GPU_DEVICE " device", BB_ERR_INVALID_ARGUMENT);
}

}  // namespace ops
