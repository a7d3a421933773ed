// The HIP device runtime plugin: gpu_runtime.inc spelled for the HIP runtime.
#include <hip/hip_runtime.h>

#include <cstdio>

#define GPU_RUNTIME_NAME "hip"
#define GPU_DLPACK_DEVICE 10 /* kDLROCM */
#define GPU_HAS_L2_DISCARD 0 /* no eviction without write-back: the host flushes */
#define GPU_HAS_WMMA 0       /* tensor throughput is not measured on HIP (FP32 only) */
#define GPU_HAS_PERSISTING_L2 0 /* no access-policy windows: nothing persists through the flush */
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
#define GPU_HOST_ALLOC_MAPPED(ptr, bytes) hipHostMalloc(ptr, bytes, hipHostMallocMapped | hipHostMallocPortable)
// HIP 5.2 has no device UUID query: the PCI address names the device.
#define GPU_UUID(prop, buf, n) \
  std::snprintf(buf, n, "%s-pci-%04x:%02x:%02x", (prop).gcnArchName, (prop).pciDomainID, (prop).pciBusID, (prop).pciDeviceID)

// The constant-rate wall clock: 100 MHz on gfx90a and gfx94x (HIP 5.2 cannot query its rate).
__device__ inline uint64_t gpu_global_ns() {
#if defined(__HIP_DEVICE_COMPILE__)
  return static_cast<uint64_t>(__builtin_amdgcn_s_memrealtime()) * 10;
#else
  return 0;
#endif
}

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

// No shareable memory on HIP yet: the host keeps to host copies (each block's buffers come back).
#define GPU_NOT_SUPPORTED hipErrorNotSupported
#define GPU_NO_DRIVER_TEXT "no AMD GPU driver on this machine (no /dev/kfd), so no HIP GPU"
#define GPU_INVALID_VALUE hipErrorInvalidValue
static int gpu_shareable_alloc(void**, size_t, size_t*, unsigned long long*) { return hipErrorNotSupported; }
static int gpu_shareable_export(unsigned long long, int*) { return hipErrorNotSupported; }
static int gpu_shareable_import(int, size_t, void**, size_t*, unsigned long long*) { return hipErrorNotSupported; }
static int gpu_shareable_free(void*, size_t, unsigned long long) { return hipErrorNotSupported; }

#include "../common/gpu_runtime.inc"
