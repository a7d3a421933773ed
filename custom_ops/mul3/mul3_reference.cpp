// The trusted reference of mul3: output = input * 3 in double precision (common/mul_by_constant.hpp).
#include "../common/mul_by_constant.hpp"

BB_REFERENCE(mul3, ops::mul_by_reference<3>)
BB_PLUGIN_INFO("1.0.0", BB_REFERENCE_DEVICES, "float32,float64,float16,bfloat16")
