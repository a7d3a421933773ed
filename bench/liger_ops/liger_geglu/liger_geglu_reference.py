# The reference: gelu(a) (tanh approximation) * b in float32.
import torch


def liger_geglu_reference(a, b):
    return (torch.nn.functional.gelu(a.float(), approximate="tanh") * b.float()).to(a.dtype)
