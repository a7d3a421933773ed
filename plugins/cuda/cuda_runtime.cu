// The CUDA device runtime plugin: gpu_runtime.inc spelled for the CUDA runtime (built by nvcc).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define GPU_RUNTIME_NAME "cuda"
#define GPU_DLPACK_DEVICE 2 /* kDLCUDA */
#define GPU_HAS_L2_DISCARD 1 /* PTX discard.global.L2, sm_80 and later */
#define GPU_HAS_WMMA 1       /* warp-level mma (nvcuda::wmma): FP16 sm_70+, BF16 sm_80+ */
#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define GPU(x) cuda##x
typedef cudaError_t gpuError_t;
typedef cudaDeviceProp gpuDeviceProp;
#define gpuSuccess cudaSuccess
#define GPU_ATTR_MULTIPROCESSORS cudaDevAttrMultiProcessorCount
#define GPU_ATTR_L2_BYTES cudaDevAttrL2CacheSize
#define GPU_ATTR_SM_CLOCK_KHZ cudaDevAttrClockRate
#define GPU_ATTR_MEMORY_CLOCK_KHZ cudaDevAttrMemoryClockRate
#define GPU_ATTR_MEMORY_BUS_BITS cudaDevAttrGlobalMemoryBusWidth
#define GPU_ARCH_NAME(prop, buf, n) std::snprintf(buf, n, "sm_%d%d", (prop).major, (prop).minor)
#define GPU_HOST_ALLOC_MAPPED(ptr, bytes) cudaHostAlloc(ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable)

static void gpu_uuid(const cudaDeviceProp& prop, char* buf, size_t n) {
  const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
                b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}
#define GPU_UUID(prop, buf, n) gpu_uuid(prop, buf, n)

// The global timer, in nanoseconds.
__device__ __forceinline__ uint64_t gpu_global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Errors after which the context is unusable and the process must start afresh.
static bool gpu_is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}
#define GPU_IS_STICKY(e) gpu_is_sticky(e)

#include "../common/gpu_runtime.inc"
