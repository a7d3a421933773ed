// The files `backendbench new-op` writes, with @OP@ standing for the op's name. What they
// build passes as written: out = alpha * x + y in float32, on every device asked for.
#pragma once

namespace bb::templates {

inline constexpr const char* kManifest = R"(# @OP@: out = alpha * x + y, element-wise (written by `backendbench new-op`; docs/MANIFEST.md
# has every key). Change the inputs, attributes, outputs and cases to your op's.
op: @OP@
description: out = alpha * x + y
seed: 1
devices: [@DEVICES@]

inputs:
  - name: x
  - name: y

attributes:
  - {name: alpha, type: float, default: 2.0}

outputs:
  - {name: out, shape: x, dtype: x}

# A case's work, for GFLOP/s, GB/s and percent of the device's peak: a multiply and an add per
# element, two reads and one write.
flops: 2 * numel(x)
bytes: 3 * numel(x) * sizeof(x)

tests:
  correctness:
    - name: vector
      params:
        n: [1, 7, 1000, 4099]
      inputs:
        x: {shape: [n], dtype: float32, init: randn}
        y: {shape: [n], dtype: float32, init: randn}
      attributes: {alpha: 0.5}
  performance:
    - name: large
      params:
        n: [65536, 4194304]
      inputs:
        x: {shape: [n], dtype: float32}
        y: {shape: [n], dtype: float32}
)";

inline constexpr const char* kReference = R"(// The trusted reference of @OP@: every implementation is checked against it. Plain and
// obviously right beats fast here: double precision, one loop.
#include <backendbench/plugin.hpp>

namespace {
void reference(bb::Call& c) {
  const double alpha = c.attr<double>("alpha", 2.0);
  auto x = c.input<float>("x");
  auto y = c.input<float>("y");
  auto out = c.output<float>("out");
  BB_CHECK(x.numel() == y.numel() && x.numel() == out.numel(), "x, y and out differ in size");
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<float>(alpha * x[i] + y[i]);
}
}  // namespace

BB_REFERENCE(@OP@, reference)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32")
)";

inline constexpr const char* kCpp = R"(// @OP@ in plain C++. Your CPU kernel goes in `@OP@` below; throw bb::Error (or use
// BB_CHECK) to refuse an input, and the run reports it as ERROR with your message.
#include <backendbench/plugin.hpp>

namespace {
void @OP@(bb::Call& c) {
  const float alpha = c.attr<float>("alpha", 2.0f);
  auto x = c.input<float>("x");
  auto y = c.input<float>("y");
  auto out = c.output<float>("out");
  // --- the kernel ---
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = alpha * x[i] + y[i];
}
}  // namespace

BB_KERNEL_IMPL(@OP@, @OP@)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32")
)";

inline constexpr const char* kCuda = R"(// @OP@ on CUDA. Tensors arrive on the device; launch on the stream you are given (work
// elsewhere is caught and is an ERROR) and do not synchronise: the host times the stream.
#include <cuda_runtime.h>

#include <string>

#include <backendbench/plugin.hpp>

namespace {

// --- the kernel ---
__global__ void @OP@_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int64_t n,
                            float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

void @OP@(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  BB_CHECK(x.device.device_type == kDLCUDA, "x is not on a CUDA device");
  const int64_t n = bb::numel_of(x);
  if (n == 0) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  @OP@_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(c.stream())>>>(
      static_cast<const float*>(x.data), static_cast<const float*>(y.data), static_cast<float*>(out.data), n,
      c.attr<float>("alpha", 2.0f));
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw bb::Error(std::string("@OP@_cuda: ") + cudaGetErrorString(e), BB_ERR_DEVICE);
}

}  // namespace

BB_KERNEL_IMPL(@OP@, @OP@)
BB_PLUGIN_INFO("1.0.0", "cuda", "float32")
)";

inline constexpr const char* kHip = R"(// @OP@ on HIP (AMD GPUs). Tensors arrive on the device; launch on the stream you are given
// and do not synchronise: the host times the stream.
#include <hip/hip_runtime.h>

#include <string>

#include <backendbench/plugin.hpp>

namespace {

// --- the kernel ---
__global__ void @OP@_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int64_t n,
                            float alpha) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

void @OP@(bb::Call& c) {
  const DLTensor& x = c.input("x");
  const DLTensor& y = c.input("y");
  DLTensor& out = c.output("out");
  BB_CHECK(x.device.device_type == kDLROCM, "x is not on a HIP device");
  const int64_t n = bb::numel_of(x);
  if (n == 0) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  hipLaunchKernelGGL(@OP@_kernel, dim3(blocks), dim3(threads), 0, static_cast<hipStream_t>(c.stream()),
                     static_cast<const float*>(x.data), static_cast<const float*>(y.data), static_cast<float*>(out.data), n,
                     c.attr<float>("alpha", 2.0f));
  if (const hipError_t e = hipGetLastError(); e != hipSuccess)
    throw bb::Error(std::string("@OP@_hip: ") + hipGetErrorString(e), BB_ERR_DEVICE);
}

}  // namespace

BB_KERNEL_IMPL(@OP@, @OP@)
BB_PLUGIN_INFO("1.0.0", "hip", "float32")
)";

// --backward: the op's backward pass too (docs/MANIFEST.md, "Backward"): declared in the
// manifest (kManifestBackward goes before its tests:), given by the reference and the C++
// implementation (appended to theirs). out = alpha * x + y: grad_x = alpha * grad_out,
// grad_y = grad_out.
inline constexpr const char* kManifestBackward = R"(# The backward (written by new-op --backward): both inputs get a gradient; a run checks and
# times it beside the forward (--mode: fwd, bwd).
backward:
  differentiable: [x, y]

)";

inline constexpr const char* kReferenceBackward = R"(
// The backward's reference: it reads x, y and grad_out (the gradient of out), and writes
// grad_x and grad_y, in double precision.
namespace {
void backward_reference(bb::Call& c) {
  const double alpha = c.attr<double>("alpha", 2.0);
  auto g = c.input<float>("grad_out");
  auto gx = c.output<float>("grad_x");
  auto gy = c.output<float>("grad_y");
  for (int64_t i = 0; i < g.numel(); ++i) {
    gx[i] = static_cast<float>(alpha * g[i]);
    gy[i] = g[i];
  }
}
}  // namespace

BB_BACKWARD_REFERENCE(@OP@, backward_reference)
)";

inline constexpr const char* kCppBackward = R"(
// The backward: grad_x and grad_y from grad_out. Write every element of each gradient (their
// buffers are poisoned before each call: adding to them fails) and read only what you are given.
namespace {
void @OP@_backward(bb::Call& c) {
  const float alpha = c.attr<float>("alpha", 2.0f);
  auto g = c.input<float>("grad_out");
  auto gx = c.output<float>("grad_x");
  auto gy = c.output<float>("grad_y");
  // --- the backward kernel ---
  for (int64_t i = 0; i < g.numel(); ++i) {
    gx[i] = alpha * g[i];
    gy[i] = g[i];
  }
}
}  // namespace

BB_BACKWARD_IMPL(@OP@, @OP@_backward)
)";

inline constexpr const char* kCMakeHead = R"(# Builds the op @OP@ out of tree against an installed BackendBench:
#   cmake -S @OP@ -B @OP@/build && cmake --build @OP@/build
# The libraries go into the op's folder of BACKENDBENCH_ROOT, by default this build's own
# @OP@/build/custom_ops (run it: backendbench --custom-ops-root @OP@/build/custom_ops), beside a
# link to this folder's gen_input.yaml: an edited manifest needs no rebuild. Pass
# -DBACKENDBENCH_ROOT=DIR for another root. A new implementation is one more source file and one
# more backendbench_add_plugin() line (a Python one: backendbench_add_python(OP @OP@ SOURCES
# @OP@_<impl>.py)): its file stem is its name (@OP@_<impl>). backendbench_add_tests() after
# enable_testing() makes each a ctest test.
cmake_minimum_required(VERSION 3.25)
project(@OP@ LANGUAGES CXX)

find_package(BackendBench REQUIRED)  # also: Release unless -DCMAKE_BUILD_TYPE says otherwise

backendbench_add_plugin(@OP@_reference OP @OP@ SOURCES @OP@_reference.cpp)
backendbench_add_plugin(@OP@_cpp OP @OP@ SOURCES @OP@_cpp.cpp)
)";

inline constexpr const char* kCMakeCuda = R"(
# CUDA, where nvcc is found, for CMAKE_CUDA_ARCHITECTURES (80;90 unless set). CUDA's libraries
# are targets: backendbench_add_plugin(... LINK CUDA::cublas).
backendbench_enable_cuda()
if(BACKENDBENCH_HAVE_CUDA)
  backendbench_add_plugin(@OP@_cuda OP @OP@ SOURCES @OP@_cuda.cu)
endif()
)";

inline constexpr const char* kCMakeHip = R"(
# HIP, where hipcc is found (BACKENDBENCH_HIP_ARCHS: the AMD architectures).
if(BACKENDBENCH_HAVE_HIP)
  backendbench_add_hip_plugin(@OP@_hip OP @OP@ NAME @OP@_hip SOURCES @OP@_hip.hip)
endif()
)";

// --lang python: the reference and the implementations as Python files (no build step).
inline constexpr const char* kPyReference = R"(# The trusted reference of @OP@: every implementation is checked against it. Plain and
# obviously right beats fast here: computed in double precision. Tensors arrive as PyTorch
# tensors sharing the host's memory; attributes as keyword arguments.
def @OP@_reference(x, y, alpha=2.0):
    return (alpha * x.double() + y.double()).to(x.dtype)
)";

inline constexpr const char* kPyTorch = R"(# @OP@ in PyTorch (written by `backendbench new-op --lang python`). Return the result (the
# worker copies it into the host's output after the call, outside the timed region), or take
# `out=` and write into it. Work on a GPU goes on PyTorch's current stream, which is the call's.
import torch


def @OP@_kernel_impl(x, y, alpha=2.0):
    return torch.add(y, x, alpha=alpha)
)";

inline constexpr const char* kPyTriton = R"(# @OP@ as a Triton kernel, compiled by Triton's JIT in the worker (no build step): at the first
# call of each specialisation, which is a checked call, never a timed one; the compilation time
# is reported apart. BACKENDBENCH_INFO says where it runs (the op's devices otherwise).
try:
    import triton
    import triton.language as tl
except ImportError:  # no Triton for this interpreter: the first call says so
    triton = None

BACKENDBENCH_INFO = {"devices": ["cuda"], "dtypes": ["float32"], "version": "1"}

if triton is not None:

    @triton.jit
    def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


def @OP@_kernel_impl(x, y, alpha=2.0, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    n = out.numel()
    axpy_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, alpha, BLOCK=1024)
)";

// What new-op writes for each device runtime (devices/device_runtimes.hpp), a row each: its
// CMake part and its implementation's file; for --lang python, its Python file, if any. A
// runtime with no row gets no implementation written (new-op says so).
struct RuntimeTemplate {
  const char* runtime;
  const char* cmake;
  const char* suffix;  // the implementation's file: <op><suffix>
  const char* source;
  const char* python_suffix;  // null: none in Python
  const char* python;
};
inline constexpr RuntimeTemplate kRuntimeTemplates[] = {
    {"cuda", kCMakeCuda, "_cuda.cu", kCuda, "_triton.py", kPyTriton},
    {"hip", kCMakeHip, "_hip.hip", kHip, nullptr, nullptr},
};

}  // namespace bb::templates
