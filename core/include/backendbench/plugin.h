/*
 * BackendBench plugin ABI.
 *
 * The only header a plugin needs. It is plain C (C89 declarations, includable from C, C++,
 * CUDA and HIP) and requires no link against the host. A plugin is a shared library that
 * exports one or more of:
 *
 *   int <op>_kernel_impl(const bb_call* call);   an implementation of <op>
 *   int <op>_reference(const bb_call* call);     the trusted reference of <op>
 *   const bb_plugin_info* backendbench_plugin_info(void);   optional info record
 *
 * Rules of the boundary:
 *   - No exceptions cross it, no C++ types, no ownership: every pointer in a bb_call belongs to
 *     the host and is valid only for the duration of the call.
 *   - The host allocates every output (out-variant); the function writes into them.
 *   - Return BB_OK (0) on success, or a nonzero BB_ERR_* code after writing a NUL-terminated
 *     message into call->error (at most call->error_capacity bytes, terminator included).
 *   - Structs only grow at the end. Each carries its size, so either side can tell which
 *     fields the other knows. Check BB_CALL_HAS(call, field) before reading a field newer than
 *     the ones below.
 */
#ifndef BACKENDBENCH_PLUGIN_H
#define BACKENDBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version: the major changes on an incompatible change; the host refuses a plugin whose
 * major differs from its own. Additions at the end of a struct do not change it. */
#define BB_ABI_VERSION_MAJOR 1
#define BB_ABI_VERSION_MINOR 1 /* 1: bb_plugin_info.preconditions */
#define BB_ABI_VERSION ((BB_ABI_VERSION_MAJOR << 16) | BB_ABI_VERSION_MINOR)
#define BB_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)

/* Return codes. */
#define BB_OK 0
#define BB_ERR_GENERIC 1           /* anything else; see the message */
#define BB_ERR_UNSUPPORTED 2       /* dtype, shape, layout or device not supported: the test is SKIPPED
                                    * with the message (an error where the library's declared
                                    * preconditions admit the case) */
#define BB_ERR_INVALID_ARGUMENT 3  /* the call does not make sense for this op */
#define BB_ERR_DEVICE 4            /* a device runtime call failed */
#define BB_ERR_ABI 5               /* the call's ABI version is not one the plugin speaks */

/* DLPack 0.6 (Debian's) predates kDLBool; this is its value in later DLPack versions. A bool
 * tensor is {code = BB_DLPACK_BOOL, bits = 8, lanes = 1}, one byte per element, 0 or 1. */
#define BB_DLPACK_BOOL 6

/* Kinds of scalar attribute. */
typedef enum bb_attr_kind {
  BB_ATTR_INT = 0,        /* value.i */
  BB_ATTR_FLOAT = 1,      /* value.f */
  BB_ATTR_BOOL = 2,       /* value.i, 0 or 1 */
  BB_ATTR_STRING = 3,     /* value.s, NUL-terminated */
  BB_ATTR_INT_LIST = 4,   /* value.ints, count elements */
  BB_ATTR_FLOAT_LIST = 5  /* value.floats, count elements */
} bb_attr_kind;

/* One named scalar attribute of the call. */
typedef struct bb_attr {
  const char* name;
  int32_t kind; /* bb_attr_kind */
  int32_t reserved;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
  const double* floats;
  int64_t count;
} bb_attr;

/* One call of an implementation or reference. */
typedef struct bb_call {
  uint32_t struct_size; /* sizeof(bb_call) as the host compiled it */
  uint32_t abi_version; /* BB_ABI_VERSION of the host */

  const char* op; /* the op's name, e.g. "myop" */

  /* Inputs, in manifest order. An in-place output aliases its input: same data pointer. */
  int32_t num_inputs;
  const DLTensor* inputs;
  const char* const* input_names;

  /* Outputs, host-allocated, in manifest order. */
  int32_t num_outputs;
  DLTensor* outputs;
  const char* const* output_names;

  /* Scalar attributes, every one the manifest declares (defaults filled in). */
  int32_t num_attrs;
  const bb_attr* attrs;

  /* The device stream to launch on: cudaStream_t / hipStream_t, or NULL on CPU. Work must be
   * enqueued on this stream; the host synchronises it. */
  void* stream;

  /* Where to write an error message (host-owned). */
  char* error;
  size_t error_capacity;
} bb_call;

#define BB_CALL_HAS(call, field) \
  ((call)->struct_size >= offsetof(bb_call, field) + sizeof(((bb_call*)0)->field))

/* Optional info record: export `const bb_plugin_info* backendbench_plugin_info(void)`. */
typedef struct bb_plugin_info {
  uint32_t struct_size; /* sizeof(bb_plugin_info) as the plugin compiled it */
  uint32_t abi_version; /* BB_ABI_VERSION the plugin was built against */
  const char* version;  /* free-form version string of the implementation, may be NULL */
  /* Devices the library's functions run on: "cpu", "cuda", "hip". NULL/0: the op's devices. */
  int32_t num_devices;
  const char* const* devices;
  /* Dtypes it supports, by BackendBench name ("float32", "bfloat16", ...). NULL/0: all.
   * A plain name constrains the tensors of its kind: a floating name ("bfloat16") every floating
   * tensor, an integer name every integer tensor, "bool" every bool tensor; a kind the list
   * names none of is not constrained (an embedding's int32 ids under ["bfloat16"]).
   * "<tensor>:<dtype>" constrains that tensor alone ("ids:int64"); a tensor named so follows
   * only those entries. A case with a tensor outside them is SKIPPED without a call. */
  int32_t num_dtypes;
  const char* const* dtypes;
  /* Since ABI 1.1. Preconditions: conditions on a case's shapes and parameters that every case
   * the library supports meets, in the manifest's expression language ("x.-1 % 4 == 0",
   * "rows <= 65535 and numel(x) > 0"; docs/MANIFEST.md). A case that fails one is SKIPPED
   * without a call; `check` and `--list` name those cases. Where preconditions are declared, a
   * call that returns BB_ERR_UNSUPPORTED on a case they admit is an ERROR. NULL/0: none. */
  int32_t num_preconditions;
  const char* const* preconditions;
} bb_plugin_info;

typedef int (*bb_kernel_fn)(const bb_call* call);
typedef const bb_plugin_info* (*bb_plugin_info_fn)(void);

#define BB_PLUGIN_INFO_SYMBOL "backendbench_plugin_info"

#if defined(_WIN32)
#define BB_EXPORT __declspec(dllexport)
#else
#define BB_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKENDBENCH_PLUGIN_H */
