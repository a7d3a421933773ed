# The reference: silu(a) * b in float32.
import torch


def liger_swiglu_reference(a, b):
    return (torch.nn.functional.silu(a.float()) * b.float()).to(a.dtype)
