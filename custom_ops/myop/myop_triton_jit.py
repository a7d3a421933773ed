# myop (y = alpha * x) as a Triton kernel compiled by Triton's JIT in the worker, with no build
# step. Compiled at the first call of each specialisation (dtype, alignment): the checked call,
# never a timed one; the compilation time is reported apart.
try:
    import triton
    import triton.language as tl
except ImportError:  # no Triton for this interpreter: the first call says so (ERROR)
    triton = None

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}

if triton is not None:

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(y_ptr + offsets, (x * alpha).to(x.dtype), mask=mask)


def myop_kernel_impl(x, alpha=2.0, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    n = out.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, alpha, BLOCK=1024)
