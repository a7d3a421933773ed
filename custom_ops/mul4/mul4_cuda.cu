// mul4 on CUDA: one 16-byte vector per thread (common/cuda_mul_by_constant.cuh).
#include "../common/cuda_mul_by_constant.cuh"

BB_KERNEL_IMPL(mul4, ops::mul_by_cuda<4>)
BB_PLUGIN_INFO("1.0.0", BB_GPU_DEVICE, "float32,float16,bfloat16")
