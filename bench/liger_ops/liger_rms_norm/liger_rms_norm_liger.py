# Liger-Kernel's Triton RMSNorm (forward), as a user calls it.
from liger_kernel.ops.rms_norm import LigerRMSNormFunction

BACKENDBENCH_INFO = {"devices": ["cuda"], "version": "1"}


def liger_rms_norm_kernel_impl(x, weight, eps=1e-6):
    return LigerRMSNormFunction.apply(x, weight, eps, 0.0, "llama", False)
