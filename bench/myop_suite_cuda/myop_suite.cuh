// Shared by the suite's CUDA plugins: the call's x, y and alpha (float32 only) and a launcher of
// an element-wise kernel on the call's stream.
#pragma once
#include <backendbench/plugin.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

struct MyopArgs {
  const float* x;
  float* y;
  int64_t n;
  float alpha;
};

// BB_OK and the arguments, or an error code with the call's message written.
inline int myop_args_of(const bb_call* call, MyopArgs* a) {
  const DLTensor* x = &call->inputs[0];
  if (x->dtype.code != kDLFloat || x->dtype.bits != 32) {
    std::snprintf(call->error, call->error_capacity, "only float32");
    return BB_ERR_UNSUPPORTED;
  }
  a->alpha = 1.0f;
  for (int i = 0; i < call->num_attrs; ++i)
    if (std::strcmp(call->attrs[i].name, "alpha") == 0) a->alpha = static_cast<float>(call->attrs[i].f);
  a->n = 1;
  for (int d = 0; d < x->ndim; ++d) a->n *= x->shape[d];
  a->x = static_cast<const float*>(x->data);
  a->y = static_cast<float*>(call->outputs[0].data);
  return BB_OK;
}

// Launches `kernel(x, y, n, alpha)` over n / per_thread threads on the call's stream.
template <typename Kernel>
int myop_launch(const bb_call* call, Kernel kernel, int per_thread = 1) {
  MyopArgs a;
  if (const int err = myop_args_of(call, &a)) return err;
  if (a.n == 0) return BB_OK;
  const int64_t threads = (a.n + per_thread - 1) / per_thread;
  kernel<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, static_cast<cudaStream_t>(call->stream)>>>(a.x, a.y, a.n, a.alpha);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    std::snprintf(call->error, call->error_capacity, "launch: %s", cudaGetErrorString(e));
    return BB_ERR_DEVICE;
  }
  return BB_OK;
}

static const char* const kMyopDevices[] = {"cuda"};
static const char* const kMyopDtypes[] = {"float32"};
#define MYOP_SUITE_INFO(version)                                                                              \
  extern "C" BB_EXPORT const bb_plugin_info* backendbench_plugin_info(void) {                                 \
    static const bb_plugin_info info = {sizeof(bb_plugin_info), BB_ABI_VERSION, version, 1, kMyopDevices, 1, kMyopDtypes}; \
    return &info;                                                                                             \
  }
