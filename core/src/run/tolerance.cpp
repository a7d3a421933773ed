#include "run/tolerance.hpp"

namespace bb {

Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::float32: return {1e-5, 1.3e-6};
    case DType::float64: return {1e-7, 1e-7};
    case DType::float16: return {1e-5, 1e-3};
    case DType::bfloat16: return {1e-5, 1.6e-2};
    default: return {0.0, 0.0};
  }
}

Tolerance resolve_tolerance(DType t, const ToleranceTable& op_level, const ToleranceTable& case_level) {
  if (auto it = case_level.find(t); it != case_level.end()) return it->second;
  if (auto it = op_level.find(t); it != op_level.end()) return it->second;
  return default_tolerance(t);
}

Tolerance resolve_tolerance(DType t, const OutputSpec& output, const ToleranceTable& op_level, const ToleranceTable& case_level) {
  if (auto it = case_level.find(t); it != case_level.end()) return it->second;
  if (auto it = output.tolerances.find(t); it != output.tolerances.end()) return it->second;
  if (output.tolerance) return *output.tolerance;
  return resolve_tolerance(t, op_level, case_level);
}

}  // namespace bb
