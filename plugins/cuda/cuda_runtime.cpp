// The CUDA device runtime plugin: gpu_runtime.inc spelled for the CUDA runtime.
#include <cuda_runtime.h>

#include <cstdio>

#define GPU_RUNTIME_NAME "cuda"
#define GPU_DLPACK_DEVICE 2 /* kDLCUDA */
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
