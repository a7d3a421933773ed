// mul4's reference on a CUDA device: output = input * 4 in double precision, as mul4_reference.cpp.
#include "../common/cuda_mul_by_constant_reference.cuh"

namespace ops {
template void mul_by_reference_cuda<4>(bb::Call& c);
}
