# The reference: Llama's RMSNorm in float32, the normalised rows cast back before the weight.
import torch


def liger_rms_norm_reference(x, weight, eps=1e-6):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y.to(x.dtype).float() * weight.float()).to(x.dtype)
