/*
 * The Python implementation kind's bridge (plugins/python): a shared library that embeds
 * CPython, loaded by a worker that serves a .py implementation, never by the host. It imports
 * the file and hands back plain bb_kernel_fn entry points bound to its functions, so that the
 * worker calls, checks and times a Python implementation exactly as it does a library's.
 * Internal to BackendBench: no plugin includes it.
 */
#ifndef BACKENDBENCH_DETAIL_PYTHON_BRIDGE_H
#define BACKENDBENCH_DETAIL_PYTHON_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include <backendbench/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BB_PYTHON_BRIDGE_VERSION 1
#define BB_PYTHON_BRIDGE_SYMBOL "backendbench_python_bridge"

typedef struct bb_python_bridge {
  uint32_t struct_size;
  uint32_t version; /* BB_PYTHON_BRIDGE_VERSION */
  /* Imports `file` (its folder first on sys.path) and resolves `<op>_kernel_impl` and
   * `<op>_reference` (NULL where the file defines no such callable). `info`: a JSON object,
   * NUL-terminated, of the module's BACKENDBENCH_INFO ({"devices": [...], "dtypes": [...],
   * "version": "..."}; "{}" without one). Returns 0, or nonzero with the reason in `error`
   * (an import error's traceback names the file and line). */
  int (*load)(const char* file, const char* op, bb_kernel_fn* kernel_impl, bb_kernel_fn* reference, char* info, size_t info_capacity,
              char* error, size_t error_capacity);
} bb_python_bridge;

typedef const bb_python_bridge* (*bb_python_bridge_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKENDBENCH_DETAIL_PYTHON_BRIDGE_H */
