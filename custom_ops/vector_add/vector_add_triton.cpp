// vector_add from a Triton kernel (vector_add_triton.py) compiled ahead of time: this file only
// turns the call's tensors into the kernel's arguments. Each dtype is compiled once, told its
// pointers are 16-byte aligned (Triton then moves 16-byte vectors): tensors that are not are
// refused. The load and launch functions come from the generated headers
// (backendbench_add_triton_plugin() in CMakeLists.txt).
#include <backendbench/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "add_bf16.h"
#include "add_bf16_n16.h"
#include "add_f16.h"
#include "add_f16_n16.h"
#include "add_f32.h"
#include "add_f32_n16.h"

namespace {

using Launch = CUresult (*)(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, int64_t);
using Load = CUresult (*)(void);

struct Variant {
  Load load;
  Launch launch;
};

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* s = nullptr;
  cuGetErrorString(r, &s);
  throw bb::Error(std::string(what) + ": " + (s ? s : "unknown CUDA driver error"), BB_ERR_DEVICE);
}

// Triton's module is loaded into one context: the first call's device. A call for another
// device is refused rather than launched into the wrong context.
std::mutex load_mutex;
int loaded_device = -1;
std::vector<Load> loaded;  // the variants loaded so far, into loaded_device's context

void load(const Variant& v, int device) {
  std::lock_guard<std::mutex> lock(load_mutex);
  if (device == loaded_device && std::find(loaded.begin(), loaded.end(), v.load) != loaded.end()) return;
  CUcontext ctx = nullptr;
  check(cuInit(0), "cuInit");
  check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  CUdevice want, current;
  check(cuDeviceGet(&want, device), "cuDeviceGet");
  if (ctx == nullptr) {  // the runtime's primary context of the device, made current here
    check(cuDevicePrimaryCtxRetain(&ctx, want), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
  check(cuCtxGetDevice(&current), "cuCtxGetDevice");
  if (current != want)
    throw bb::Error("the current CUDA context is not the tensors' device " + std::to_string(device) + "'s", BB_ERR_DEVICE);
  if (loaded_device >= 0 && loaded_device != device)
    throw bb::Error("the Triton module was loaded for device " + std::to_string(loaded_device) + ", not " + std::to_string(device),
                    BB_ERR_UNSUPPORTED);
  check(v.load(), "loading the Triton kernel");
  loaded_device = device;
  loaded.push_back(v.load);
}

CUdeviceptr ptr(const DLTensor& t) { return reinterpret_cast<CUdeviceptr>(static_cast<char*>(t.data) + t.byte_offset); }

void vector_add(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  for (const DLTensor* t : {&x, &y, static_cast<const DLTensor*>(&out)}) {
    if (t->device.device_type != kDLCUDA) throw bb::Error("x, y and out must be on a cuda device", BB_ERR_INVALID_ARGUMENT);
    BB_CHECK(bb::is_contiguous(*t) && bb::same_dtype(t->dtype, x.dtype), "x, y and out must be contiguous and share a dtype");
  }
  const int64_t n = bb::numel_of(x);
  BB_CHECK(bb::numel_of(y) == n && bb::numel_of(out) == n, "x, y and out differ in size");
  if (n == 0) return;  // Triton's launch function must not see an empty grid

  if (((ptr(x) | ptr(y) | ptr(out)) & 15u) != 0)
    throw bb::Error("x, y and out must be 16-byte aligned (the kernels are compiled with :16 hints)", BB_ERR_UNSUPPORTED);
  const bool n16 = n % 16 == 0;  // Triton's JIT specialises so too
  Variant v{};
  if (bb::same_dtype(x.dtype, bb::dtype_of<float>()))
    v = n16 ? Variant{add_f32_n16_load, add_f32_n16_launch} : Variant{add_f32_load, add_f32_launch};
  else if (bb::same_dtype(x.dtype, bb::dtype_of<bb::half>()))
    v = n16 ? Variant{add_f16_n16_load, add_f16_n16_launch} : Variant{add_f16_load, add_f16_launch};
  else if (bb::same_dtype(x.dtype, bb::dtype_of<bb::bfloat16>()))
    v = n16 ? Variant{add_bf16_n16_load, add_bf16_n16_launch} : Variant{add_bf16_load, add_bf16_launch};
  else
    throw bb::Error(std::string("unsupported dtype ") + bb::dtype_name(x.dtype), BB_ERR_UNSUPPORTED);

  load(v, x.device.device_id);
  check(v.launch(static_cast<CUstream>(c.stream()), ptr(x), ptr(y), ptr(out), n), "launching the Triton kernel");
}

}  // namespace

BB_KERNEL_IMPL(vector_add, vector_add)
BB_PLUGIN_INFO("1.0.0", "cuda", "float32,float16,bfloat16")
