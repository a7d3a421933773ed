#!/usr/bin/env python3
"""Compiles one Triton kernel ahead of time for a BackendBench plugin.

Runs Triton's own AOT compiler (`python -m triton.tools.compile`), which writes C source that
embeds the kernel's cubin plus a header, under names that carry a hash of the signature. This
script gives them stable names, <out-dir>/<out-name>.c and .h, and adds what a plugin needs:

  CUresult <out-name>_load(void);   loads the cubin into the current context; errors are
                                    returned (Triton's own load_<name>() prints and exit()s)
  <out-name>_launch(stream, ...)    the launch function (a macro naming Triton's), grid baked in
  <OUT-NAME>_NUM_THREADS            threads per block; <OUT-NAME>_TRITON_VERSION

Usage (backendbench_add_triton_plugin() in BackendBenchTriton.cmake runs it):
  backendbench_triton_aot.py --kernel FILE.py --name FN --signature SIG --grid GRID
                             --out-name NAME --out-dir DIR [--num-warps W] [--num-stages S]
  backendbench_triton_aot.py --probe    prints Triton's version and the GPU target it compiles
                                        for, or why it cannot (exit 1)
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print(f"backendbench_triton_aot: {msg}", file=sys.stderr)
    sys.exit(1)


def probe():
    try:
        import triton  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        print(f"Python module 'triton' not importable by {sys.executable}: {e}")
        return 1
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception as e:  # no GPU driver or no GPU: Triton compiles for the GPU it finds
        print(f"Triton {triton.__version__} finds no GPU to compile for: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        return 1
    if target.backend != "cuda":
        print(f"Triton {triton.__version__} targets {target.backend}; BackendBench's AOT helper handles CUDA only")
        return 1
    print(f"{triton.__version__};{target.backend}:{target.arch}")
    return 0


def one(paths, what, folder):
    if len(paths) != 1:
        fail(f"expected one {what} from triton.tools.compile in {folder}, found {len(paths)}: {[p.name for p in paths]}")
    return paths[0]


def compile_kernel(a):
    kernel = pathlib.Path(a.kernel).resolve()
    if not kernel.is_file():
        fail(f"{kernel}: no such kernel file")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a.out_name):
        fail(f"--out-name '{a.out_name}': expected a C identifier")
    out_dir = pathlib.Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    import triton
    with tempfile.TemporaryDirectory(prefix="bb_triton_aot_") as tmp:
        cmd = [sys.executable, "-m", "triton.tools.compile", str(kernel), "--kernel-name", a.name, "--signature", a.signature,
               "--grid", a.grid, "--num-warps", str(a.num_warps), "--num-stages", str(a.num_stages), "--out-name", a.out_name,
               "--out-path", str(pathlib.Path(tmp) / a.out_name)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
            fail(f"{kernel}: triton.tools.compile of '{a.name}' with signature '{a.signature}' failed "
                 f"(exit {r.returncode}):\n{tail}")
        c_src = one(sorted(pathlib.Path(tmp).glob(f"{a.out_name}.*.c")), "C source", tmp).read_text()
        h_src = one(sorted(pathlib.Path(tmp).glob(f"{a.out_name}.*.h")), "header", tmp).read_text()

    proto = re.search(r"^CUresult\s+(\w+)\(CUstream stream(?:, ([^)]*))?\);", h_src, re.M)
    if not proto:
        fail(f"{kernel}: no launch prototype 'CUresult <name>(CUstream stream, ...);' in Triton {triton.__version__}'s header")
    full = proto.group(1)
    shared = re.search(r"int shared = (\d+);", c_src)
    entry = re.search(r'cuModuleGetFunction\(&\w+, \w+, "(\w+)"\)', c_src)
    warps = re.search(r"cuLaunchKernel\(\w+, gX, gY, gZ, (\d+) \* (\d+)", c_src)
    if not (shared and entry and warps) or f"{full}_cubin" not in c_src:
        fail(f"{kernel}: Triton {triton.__version__}'s generated C is not in the form this helper reads "
             f"(int shared = N; cuModuleGetFunction(...); {full}_cubin)")
    up = a.out_name.upper()

    (out_dir / f"{a.out_name}.c").write_text(c_src + f"""
/* Added by BackendBench (cmake/backendbench_triton_aot.py): a load whose errors are values. */
CUresult {a.out_name}_load(void) {{
  if ({full}_func != NULL) return CUDA_SUCCESS;
  CUmodule mod = NULL;
  CUfunction func = NULL;
  CUresult r = cuModuleLoadData(&mod, (const void*){full}_cubin);
  if (r != CUDA_SUCCESS) return r;
  r = cuModuleGetFunction(&func, mod, "{entry.group(1)}");
  if (r == CUDA_SUCCESS && {shared.group(1)} > 49152) {{
    CUdevice dev;
    int optin = 0;
    r = cuCtxGetDevice(&dev);
    if (r == CUDA_SUCCESS) r = cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (r == CUDA_SUCCESS && optin < {shared.group(1)}) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) r = cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  }}
  if (r != CUDA_SUCCESS) {{
    cuModuleUnload(mod);
    return r;
  }}
  {full}_mod = mod;
  {full}_func = func;
  return CUDA_SUCCESS;
}}
""")
    args = proto.group(2) or ""
    (out_dir / f"{a.out_name}.h").write_text(f"""/* {a.out_name}: Triton kernel '{a.name}' of {kernel.name} compiled ahead of time by Triton {triton.__version__}
 * (signature "{a.signature}", grid "{a.grid}", {a.num_warps} warps, {a.num_stages} stages).
 * Generated by BackendBench's cmake/backendbench_triton_aot.py: do not edit. */
#pragma once
#include <cuda.h>

#ifdef __cplusplus
extern "C" {{
#endif
/* Loads the kernel into the calling thread's current context (call once, before launching). */
CUresult {a.out_name}_load(void);
/* Launches on the stream; a grid of zero blocks must not be launched. */
CUresult {full}(CUstream stream{', ' + args if args else ''});
#ifdef __cplusplus
}}
#endif

#define {a.out_name}_launch {full}
#define {up}_NUM_THREADS ({warps.group(1)} * {warps.group(2)})
#define {up}_TRITON_VERSION "{triton.__version__}"
""")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", action="store_true")
    p.add_argument("--kernel")
    p.add_argument("--name")
    p.add_argument("--signature")
    p.add_argument("--grid")
    p.add_argument("--out-name")
    p.add_argument("--out-dir")
    p.add_argument("--num-warps", type=int, default=4)
    p.add_argument("--num-stages", type=int, default=3)
    a = p.parse_args()
    if a.probe:
        return probe()
    missing = [f"--{k.replace('_', '-')}" for k in ("kernel", "name", "signature", "grid", "out_name", "out_dir") if not getattr(a, k)]
    if missing:
        fail(f"missing {', '.join(missing)}")
    return compile_kernel(a)


if __name__ == "__main__":
    sys.exit(main())
