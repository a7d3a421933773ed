// The CUDA device runtime plugin: gpu_runtime.inc spelled for the CUDA runtime (built by nvcc).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define GPU_RUNTIME_NAME "cuda"
#define GPU_DLPACK_DEVICE 2 /* kDLCUDA */
#define GPU_HAS_L2_DISCARD 1 /* PTX discard.global.L2, sm_80 and later */
#define GPU_HAS_WMMA 1       /* warp-level mma (nvcuda::wmma): FP16 sm_70+, BF16 sm_80+ */
#define GPU_HAS_PERSISTING_L2 1 /* access-policy windows; PTX applypriority, sm_80 and later */
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

// What a call may have set to keep lines in L2 across the flush (issue 39): every persisting
// line made normal (takes effect at once, whatever is queued) and `stream`'s access-policy
// window cleared. The context's persisting set-aside is left as the call set it: without
// persisting lines it keeps nothing, and an implementation that sets it once per process would
// otherwise set it again, and wait for the device, in every call.
static cudaError_t gpu_reset_persisting_settings(cudaStream_t stream) {
  if (cudaError_t e = cudaCtxResetPersistingL2Cache(); e != cudaSuccess) return e;
  cudaStreamAttrValue none{};
  none.accessPolicyWindow.base_ptr = nullptr;
  none.accessPolicyWindow.num_bytes = 0;
  none.accessPolicyWindow.hitRatio = 0;
  none.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  none.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  return cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &none);
}

#if defined(BB_HAVE_CUBLAS)
#include <cublas_v2.h>
#include <dlfcn.h>
// Compute peak strategies beyond the kernels of gpu_runtime.inc: cuBLAS GEMMs of 8192^3 (FP32
// without TF32, FP16 and BF16 with FP32 accumulate), where the library can be opened (it is
// not linked: the runtime plugin must load without it). `kind(name, strategy, flops, launch,
// proves_itself)` times `launch` as every strategy is timed.
// Operands of uniform values in [-1, 1) (a hash of the index): constant operands draw less
// power and let the clocks stay higher than real data does (899 against 700 TFLOP/s read on an
// H100 in FP16), which would make the roofline bound unreachable.
template <typename T>
__global__ void bb_fill_uniform(T* p, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<T>(static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f);
  }
}

template <typename Kind>
void gpu_extra_compute(Kind& kind) {
  char soname[32];
  std::snprintf(soname, sizeof soname, "libcublas.so.%d", CUBLAS_VER_MAJOR);
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(dlsym(lib, "cublasCreate_v2"));
  auto destroy = reinterpret_cast<decltype(&cublasDestroy_v2)>(dlsym(lib, "cublasDestroy_v2"));
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                                    cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);  // the exported C symbol
  auto gemm_ex = reinterpret_cast<GemmEx>(dlsym(lib, "cublasGemmEx"));
  cublasHandle_t handle = nullptr;
  if (!create || !destroy || !gemm_ex || create(&handle) != CUBLAS_STATUS_SUCCESS) {
    dlclose(lib);
    return;
  }
  const int n = 8192;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  const size_t bytes = static_cast<size_t>(n) * n * 4;
  if (cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess && cudaMalloc(&c, bytes) == cudaSuccess) {
    const float alpha = 1.0f, beta = 0.0f;
    const double flops = 2.0 * n * n * n;
    const size_t count = static_cast<size_t>(n) * n;
    auto fill = [&](cudaDataType t) {
      for (int k = 0; k < 2; ++k) {
        void* p = k == 0 ? a : b;
        if (t == CUDA_R_32F) bb_fill_uniform<<<1024, 256>>>(static_cast<float*>(p), count, 17u + k);
        if (t == CUDA_R_16F) bb_fill_uniform<<<1024, 256>>>(static_cast<__half*>(p), count, 17u + k);
        if (t == CUDA_R_16BF) bb_fill_uniform<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), count, 17u + k);
      }
      return cudaDeviceSynchronize() == cudaSuccess;
    };
    auto gemm = [&](cudaDataType t) {
      return [&, t] {
        (void)gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, t, n, b, t, n, &beta, c, t, n, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT);
      };
    };
    if (fill(CUDA_R_32F)) kind("fp32", "cuBLAS GEMM 8192^3, no TF32, random operands", flops, gemm(CUDA_R_32F), false);
    if (fill(CUDA_R_16F)) kind("fp16 tensor", "cuBLAS GEMM 8192^3, FP32 accumulate, random operands", flops, gemm(CUDA_R_16F), false);
    if (fill(CUDA_R_16BF)) kind("bf16 tensor", "cuBLAS GEMM 8192^3, FP32 accumulate, random operands", flops, gemm(CUDA_R_16BF), false);
  }
  if (a) cudaFree(a);
  if (b) cudaFree(b);
  if (c) cudaFree(c);
  destroy(handle);
  dlclose(lib);
}
#define GPU_EXTRA_COMPUTE(kind) gpu_extra_compute(kind)
#endif

// Shareable device memory through the driver's virtual memory management: an allocation with a
// POSIX file descriptor handle, which crosses a Unix socket (SCM_RIGHTS) into another process
// whatever its PID namespace (the legacy cudaIpc handles do not). The driver's entry points are
// looked up at run time (libcuda.so.1, present wherever a device is): the plugin itself must
// load on a machine without a driver.
#include <cuda.h>
#include <dlfcn.h>

#define GPU_NOT_SUPPORTED cudaErrorNotSupported
#define GPU_NO_DRIVER_TEXT "no NVIDIA driver on this machine (libcuda.so.1 is not installed), so no CUDA GPU"
#define GPU_INVALID_VALUE cudaErrorInvalidValue

namespace {
struct Vmm {
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&cuMemImportFromShareableHandle) import_handle = nullptr;
  bool ok = false;
};
const Vmm& vmm() {
  static const Vmm v = [] {
    Vmm v;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return v;
    auto get = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name)); };
    get(v.create, "cuMemCreate");
    get(v.release, "cuMemRelease");
    get(v.reserve, "cuMemAddressReserve");
    get(v.address_free, "cuMemAddressFree");
    get(v.map, "cuMemMap");
    get(v.unmap, "cuMemUnmap");
    get(v.set_access, "cuMemSetAccess");
    get(v.granularity, "cuMemGetAllocationGranularity");
    get(v.export_handle, "cuMemExportToShareableHandle");
    get(v.import_handle, "cuMemImportFromShareableHandle");
    v.ok = v.create && v.release && v.reserve && v.address_free && v.map && v.unmap && v.set_access && v.granularity && v.export_handle &&
           v.import_handle;
    return v;
  }();
  return v;
}

int vmm_error(CUresult r) { return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorUnknown); }

CUmemAllocationProp vmm_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Maps `handle` (`size` bytes) at a new address with read-write access on `device`.
int vmm_map(CUmemGenericAllocationHandle handle, size_t size, int device, void** ptr) {
  const Vmm& v = vmm();
  CUdeviceptr p = 0;
  if (CUresult r = v.reserve(&p, size, 0, 0, 0); r != CUDA_SUCCESS) return vmm_error(r);
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUresult r = v.map(p, size, 0, handle, 0);
  if (r == CUDA_SUCCESS) {
    r = v.set_access(p, size, &access, 1);
    if (r != CUDA_SUCCESS) v.unmap(p, size);
  }
  if (r != CUDA_SUCCESS) {
    v.address_free(p, size);
    return vmm_error(r);
  }
  *ptr = reinterpret_cast<void*>(p);
  return 0;
}

// The allocation's size for `bytes`: whole units of the device's granularity.
int vmm_size(int device, size_t bytes, size_t* size) {
  size_t g = 0;
  const CUmemAllocationProp prop = vmm_prop(device);
  if (CUresult r = vmm().granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS || g == 0) return vmm_error(r);
  *size = (bytes + g - 1) / g * g;
  return 0;
}
}  // namespace

static int gpu_shareable_alloc(void** ptr, size_t bytes, size_t* size, unsigned long long* handle) {
  if (!vmm().ok) return cudaErrorNotSupported;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return e;  // the runtime's context, current
  if (int e = vmm_size(device, bytes, size); e != 0) return e;
  const CUmemAllocationProp prop = vmm_prop(device);
  CUmemGenericAllocationHandle h = 0;
  if (CUresult r = vmm().create(&h, *size, &prop, 0); r != CUDA_SUCCESS) return vmm_error(r);
  if (int e = vmm_map(h, *size, device, ptr); e != 0) {
    vmm().release(h);
    return e;
  }
  *handle = h;
  return 0;
}

static int gpu_shareable_export(unsigned long long handle, int* fd) {
  if (!vmm().ok) return cudaErrorNotSupported;
  return vmm_error(vmm().export_handle(fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
}

static int gpu_shareable_import(int fd, size_t bytes, void** ptr, size_t* size, unsigned long long* handle) {
  if (!vmm().ok) return cudaErrorNotSupported;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return e;
  if (int e = vmm_size(device, bytes, size); e != 0) return e;
  CUmemGenericAllocationHandle h = 0;
  if (CUresult r = vmm().import_handle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      r != CUDA_SUCCESS)
    return vmm_error(r);
  if (int e = vmm_map(h, *size, device, ptr); e != 0) {
    vmm().release(h);
    return e;
  }
  *handle = h;
  return 0;
}

static int gpu_shareable_free(void* ptr, size_t size, unsigned long long handle) {
  const Vmm& v = vmm();
  const auto p = reinterpret_cast<CUdeviceptr>(ptr);
  CUresult r = v.unmap(p, size);
  if (CUresult a = v.address_free(p, size); r == CUDA_SUCCESS) r = a;
  if (CUresult b = v.release(handle); r == CUDA_SUCCESS) r = b;
  return vmm_error(r);
}

#include "../common/gpu_runtime.inc"
