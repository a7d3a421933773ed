# vector_add as a Triton kernel compiled by Triton's JIT in the worker, with no build step (the
# ahead-of-time variant is vector_add_triton.py with its plugin). Triton compiles at the first
# call of each specialisation, which is the checked call, never a timed one; the compilation is
# reported apart (the run's "just-in-time compiling" figure). It launches on PyTorch's current
# stream, which is the call's: the worker makes it so around every call.
try:
    import triton
    import triton.language as tl
except ImportError:  # no Triton for this interpreter: the first call says so (ERROR)
    triton = None

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}

if triton is not None:

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def vector_add_kernel_impl(x, y, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
