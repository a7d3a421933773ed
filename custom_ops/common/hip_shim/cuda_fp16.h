// HIP shim for <cuda_fp16.h>: __half and its conversions have the same names in HIP.
#pragma once
#include <hip/hip_fp16.h>
