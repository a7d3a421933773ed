// mul3's reference on a CUDA device: output = input * 3 in double precision, as mul3_reference.cpp.
#include "../common/cuda_mul_by_constant_reference.cuh"

namespace ops {
template void mul_by_reference_cuda<3>(bb::Call& c);
}
