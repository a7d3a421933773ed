// Default comparison tolerances per dtype, and how overrides layer on them.
#pragma once

#include "plan/manifest.hpp"

namespace bb {

// torch.testing.assert_close's defaults: float32 rtol 1.3e-6 atol 1e-5, float64 1e-7/1e-7,
// float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5; integers and bool compare exactly.
Tolerance default_tolerance(DType t);

// The tolerance for dtype t: the case's override, else the op's, else the default.
Tolerance resolve_tolerance(DType t, const ToleranceTable& op_level, const ToleranceTable& case_level);
// The same for one output: the case's, else the output's own (per dtype, then for any dtype),
// else the op's, else the default.
Tolerance resolve_tolerance(DType t, const OutputSpec& output, const ToleranceTable& op_level, const ToleranceTable& case_level);

}  // namespace bb
