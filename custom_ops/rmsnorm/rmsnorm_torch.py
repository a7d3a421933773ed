# rmsnorm in PyTorch, forward and backward: a torch.autograd.Function whose backward is written
# by hand from what its forward saved (x, weight and each row's rstd), as a training layer is.
# BackendBench takes its backward through autograd (docs/PYTHON.md, Backward passes): the
# forward runs inside each bwd call, so its bwd figures are forward and backward together.
# Half precisions compute in float32. On a GPU (the fixtures of test/fixtures/python_backward run
# the same paths on the CPU).
import torch

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


class RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return (xf * rstd * weight.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_y):
        x, weight, rstd = ctx.saved_tensors
        xf, gy = x.float(), grad_y.float()
        gxhat = gy * weight.float()
        # d/dx of x * rstd: rstd * (g - x * rstd^2 * mean(g * x)) along the row.
        grad_x = rstd * (gxhat - xf * rstd.pow(2) * (gxhat * xf).mean(-1, keepdim=True))
        grad_weight = (gy * xf * rstd).reshape(-1, x.shape[-1]).sum(0)
        return grad_x.to(x.dtype), grad_weight.to(weight.dtype), None


def rmsnorm_kernel_impl(x, weight, eps=1e-6):
    return RMSNorm.apply(x, weight, eps)
