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

#define BB_PYTHON_BRIDGE_VERSION 9
#define BB_PYTHON_BRIDGE_SYMBOL "backendbench_python_bridge"
/* The interpreter whose packages (sys.path) the embedded one takes: set by the host from
 * --python; without it, `python3` on the PATH where it is this installation or a venv of it.
 * The host asks that interpreter once and passes its answer, a JSON object {"interpreter",
 * "named", "version": [major, minor], "base_prefix", "path": [...]}, in BB_PYTHON_SITE_ENV. */
#define BB_PYTHON_ENV "BACKENDBENCH_PYTHON"
#define BB_PYTHON_SITE_ENV "BACKENDBENCH_PYTHON_SITE"

typedef struct bb_python_bridge {
  uint32_t struct_size;
  uint32_t version; /* BB_PYTHON_BRIDGE_VERSION */
  /* Imports `file` (its folder first on sys.path) and resolves `<op>_kernel_impl` and
   * `<op>_reference` (NULL where the file defines no such callable), and their backward passes:
   * `<op>_backward` and `<op>_backward_reference`, or, where the file has the forward but not
   * that function, the forward's gradients taken through PyTorch's autograd (docs/PYTHON.md,
   * Backward passes). `info`: a JSON object,
   * NUL-terminated, of the module's BACKENDBENCH_INFO ({"devices": [...], "dtypes": [...],
   * "version": "..."}; "{}" without one). Returns 0, or nonzero with the reason in `error`
   * (an import error's traceback names the file and line). */
  int (*load)(const char* file, const char* op, bb_kernel_fn* kernel_impl, bb_kernel_fn* reference, bb_kernel_fn* backward_impl,
              bb_kernel_fn* backward_reference, char* info, size_t info_capacity, char* error, size_t error_capacity);
  /* What the last call returned for output `k`, for the worker to copy into the host's output
   * outside the timed region: the first byte of a contiguous tensor of the output's shape, dtype
   * and device (checked in the call), on the call's stream; NULL where the call wrote the output
   * itself (out=, or it returned the output). Valid until release(). */
  const void* (*returned)(int32_t k);
  /* Lets go of what the last call returned. */
  void (*release)(void);
  /* The just-in-time compilations (Triton's) seen in this process so far: their count and, the
   * value returned, their seconds. */
  double (*compile_seconds)(int64_t* compiles);
  /* A BackendBench-py folder's tests made into a manifest: runs `gen_input` (a gen_input.py),
   * the outputs' shapes taken from the first of `candidates` (a JSON list of .py files) that
   * defines <op>_reference or <op>_kernel_impl, and writes gen_input.yaml (JSON) and data/ (.npy files)
   * into `out_dir`. Returns 0, or nonzero with the reason in `error`. */
  int (*generate)(const char* gen_input, const char* candidates, const char* op, uint64_t seed, const char* out_dir, char* error,
                  size_t error_capacity);
  /* What each of `files` (a JSON list of .py files) defines, each imported in a process of its
   * own forked from this one once PyTorch is imported: `out` gets a JSON list of {"loaded",
   * "error", "has_kernel_impl", "has_reference", "info"}. Returns 0, or nonzero with `error`. */
  int (*survey)(const char* files, const char* op, char* out, size_t out_capacity, char* error, size_t error_capacity);
  /* Starts the interpreter as load() would (its packages, PyTorch) and imports Triton where it
   * is installed, before any implementation is known: a worker's "warm" request, so that the
   * imports happen while other work goes on. Returns 0, or nonzero with the reason in `error`
   * (load() then says it again). */
  int (*start)(char* error, size_t error_capacity);
  /* Forking a started interpreter (the warm interpreter that Python workers are forked from:
   * core/src/worker/python_zygote_process.cpp): before_fork() just before the fork, then
   * after_fork(1) in the child at once, after_fork(0) in the parent. Called without the GIL. */
  void (*before_fork)(void);
  void (*after_fork)(int child);
  /* In a forked child, once its walls are up: `environment` (a JSON list of "NAME=value")
   * replaces the process's environment, os.environ included, and Triton's cache is made
   * private to it again. Returns 0, or nonzero with the reason in `error`. */
  int (*become_worker)(const char* environment, char* error, size_t error_capacity);
  /* The started interpreter's sys.path (a JSON list), into `out`. Returns 0, or nonzero where it
   * was not started or the list does not fit. */
  int (*package_path)(char* out, size_t out_capacity);
  /* The warm interpreter's library work (python_zygote.hpp), by `function`: "scan_imports"
   * (`argument`: a JSON list of .py files; `out`: {file: [modules it imports from outside its
   * folder]}, by reading them, nothing run) or "preimport" (`argument`: a JSON list of modules,
   * imported now; `out`: {"import_s": s}). Returns 0, or nonzero with the reason in `error`. */
  int (*library)(const char* function, const char* argument, char* out, size_t out_capacity, char* error, size_t error_capacity);
  /* What each of `files` (a JSON list of [file, op] pairs) defines, read from its text: nothing
   * of it runs and PyTorch is not imported. `out` gets a JSON list with, for each file, the
   * survey's entry (with "read": true) where its text says for certain, else null (the file must
   * be imported to be surveyed). Returns 0, or nonzero with the reason in `error`. */
  int (*read)(const char* files, char* out, size_t out_capacity, char* error, size_t error_capacity);
} bb_python_bridge;

typedef const bb_python_bridge* (*bb_python_bridge_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKENDBENCH_DETAIL_PYTHON_BRIDGE_H */
