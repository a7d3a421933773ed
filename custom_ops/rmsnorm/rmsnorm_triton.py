# rmsnorm as Triton kernels compiled by Triton's JIT, forward and backward, with no build step.
# The forward: a program per row. The backward, rmsnorm_backward (docs/PYTHON.md, Backward
# passes): a program per group of rows writes each row's grad_x and adds its rows' share of
# grad_weight (dy * x * rstd) into a float32 partial of its own; the partials are summed by
# PyTorch on the call's stream. rstd is computed again from x (the backward reads no saved
# statistic). Half precisions load and compute in float32.
try:
    import torch
    import triton
    import triton.language as tl
except ImportError:  # no Triton for this interpreter: the first call says so (ERROR)
    triton = None

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}

if triton is not None:

    @triton.jit
    def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
        tl.store(y_ptr + row * cols + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def rmsnorm_bwd_kernel(x_ptr, w_ptr, gy_ptr, gx_ptr, gw_part_ptr, rows, cols, rows_per_program, eps, BLOCK: tl.constexpr):
        program = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        gw = tl.zeros([BLOCK], dtype=tl.float32)
        first = program * rows_per_program
        for k in range(0, rows_per_program):
            row = first + k
            if row < rows:
                at = row * cols + offs
                x = tl.load(x_ptr + at, mask=mask, other=0.0).to(tl.float32)
                gy = tl.load(gy_ptr + at, mask=mask, other=0.0).to(tl.float32)
                rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
                gxhat = gy * w
                c = tl.sum(gxhat * x, axis=0) / cols
                gx = rstd * (gxhat - x * (rstd * rstd * c))
                tl.store(gx_ptr + at, gx.to(gx_ptr.dtype.element_ty), mask=mask)
                gw += gy * x * rstd
        tl.store(gw_part_ptr + program * cols + offs, gw, mask=mask)

_sms = {}


def _shape(x):
    cols = x.shape[-1]
    block = max(16, triton.next_power_of_2(cols))
    return x.numel() // cols, cols, block, 4 if block <= 1024 else 8 if block <= 4096 else 16


def rmsnorm_kernel_impl(x, weight, eps=1e-6, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    rows, cols, block, warps = _shape(x)
    if block > 16384:
        raise NotImplementedError("rows longer than 16384 elements do not fit one program")
    rmsnorm_fwd_kernel[(rows,)](x, weight, out, cols, eps, BLOCK=block, num_warps=warps)


def rmsnorm_backward(x, weight, grad_y, eps=1e-6, *, out):
    if triton is None:
        raise RuntimeError("Triton is not installed for this interpreter")
    grad_x, grad_weight = out
    rows, cols, block, warps = _shape(x)
    if block > 16384:
        raise NotImplementedError("rows longer than 16384 elements do not fit one program")
    sms = _sms.get(x.device.index)
    if sms is None:
        sms = _sms[x.device.index] = torch.cuda.get_device_properties(x.device).multi_processor_count
    programs = max(1, min(rows, 4 * sms))
    per_program = triton.cdiv(rows, programs)
    programs = triton.cdiv(rows, per_program)
    partials = torch.empty((programs, cols), dtype=torch.float32, device=x.device)
    rmsnorm_bwd_kernel[(programs,)](x, weight, grad_y, grad_x, partials, rows, cols, per_program, eps, BLOCK=block, num_warps=warps)
    grad_weight.copy_(partials.sum(0))
