// mul4 in plain C++, in float (common/mul_by_constant.hpp).
#include "../common/mul_by_constant.hpp"

BB_KERNEL_IMPL(mul4, ops::mul_by_cpp<4>)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float16,bfloat16")
