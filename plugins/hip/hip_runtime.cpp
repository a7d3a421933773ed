// The HIP device runtime plugin: gpu_runtime.inc spelled for the HIP runtime.
#include <hip/hip_runtime.h>

#include <cstdio>

#define GPU_RUNTIME_NAME "hip"
#define GPU_DLPACK_DEVICE 10 /* kDLROCM */
#define GPU(x) hip##x
typedef hipError_t gpuError_t;
typedef hipDeviceProp_t gpuDeviceProp;
#define gpuSuccess hipSuccess
#define GPU_ATTR_MULTIPROCESSORS hipDeviceAttributeMultiprocessorCount
#define GPU_ATTR_L2_BYTES hipDeviceAttributeL2CacheSize
#define GPU_ATTR_SM_CLOCK_KHZ hipDeviceAttributeClockRate
#define GPU_ATTR_MEMORY_CLOCK_KHZ hipDeviceAttributeMemoryClockRate
#define GPU_ATTR_MEMORY_BUS_BITS hipDeviceAttributeMemoryBusWidth
#define GPU_ARCH_NAME(prop, buf, n) std::snprintf(buf, n, "%s", (prop).gcnArchName)

static bool gpu_is_sticky(hipError_t e) {
  switch (e) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorECCNotCorrectable:
    case hipErrorLaunchTimeOut:
      return true;
    default:
      return false;
  }
}
#define GPU_IS_STICKY(e) gpu_is_sticky(e)

#include "../common/gpu_runtime.inc"
