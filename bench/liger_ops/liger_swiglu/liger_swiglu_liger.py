# Liger-Kernel's Triton SwiGLU (forward).
from liger_kernel.ops.swiglu import LigerSiLUMulFunction

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


def liger_swiglu_kernel_impl(a, b):
    return LigerSiLUMulFunction.apply(a, b)
