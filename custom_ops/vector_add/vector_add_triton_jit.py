# vector_add as a Triton kernel compiled by Triton's JIT in the worker, with no build step: the
# same kernel the ahead-of-time plugin compiles (vector_add_triton.py, beside this file). Triton
# compiles at the first call of each specialisation, which is the checked call, never a timed
# one; the compilation is reported apart (the run's "just-in-time compiling" figure). It launches
# on PyTorch's current stream, which is the call's: the worker makes it so around every call.
try:
    import triton
    from vector_add_triton import add_kernel
except ImportError:  # no Triton for this interpreter: the first call says so (ERROR)
    triton = None

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


def vector_add_kernel_impl(x, y, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
