// Arithmetic expressions of the manifest: shapes, output shapes, initialiser bounds, FLOPs and
// bytes, and the conditions of implementations' preconditions.
//
//   rows * cols            names are sweep parameters
//   x.0, w.-1              dimension of an input tensor (negative counts from the end)
//   numel(x), sizeof(x)    element count / element size in bytes of a tensor
//   sizeof(dtype)          element size of a dtype-valued parameter or a dtype name
//   + - * / // % **, parentheses, min(a, b), max(a, b), ceil_div(a, b), sqrt(a)
//   == != < <= > >=, and, or, not       conditions (preconditions): 1 when true, 0 when false
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "expected.hpp"

namespace bb {

class ExprEnv {
 public:
  virtual ~ExprEnv() = default;
  // The value of a plain name or a dotted tensor dimension ("x.0"); nullopt if unknown.
  virtual std::optional<double> variable(std::string_view name) const = 0;
  // numel(arg) / sizeof(arg); nullopt if arg names nothing suitable.
  virtual std::optional<double> tensor_function(std::string_view fn, std::string_view arg) const = 0;
};

// Evaluates `text`; errors say what was expected and at which column.
Expected<double> evaluate(std::string_view text, const ExprEnv& env);

// Evaluates and requires a non-negative integer (a dimension or a count).
Expected<long long> evaluate_dimension(std::string_view text, const ExprEnv& env);

}  // namespace bb
