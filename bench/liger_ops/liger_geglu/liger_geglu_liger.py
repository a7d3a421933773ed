# Liger-Kernel's Triton GeGLU (forward).
from liger_kernel.ops.geglu import LigerGELUMulFunction

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


def liger_geglu_kernel_impl(a, b):
    return LigerGELUMulFunction.apply(a, b)
