# Liger-Kernel's Triton LayerNorm (forward).
from liger_kernel.ops.layer_norm import LigerLayerNormFunction

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


def liger_layer_norm_kernel_impl(x, weight, bias, eps=1e-5):
    return LigerLayerNormFunction.apply(x, weight, bias, eps)
