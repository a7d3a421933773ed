// Element-wise comparison of an output against the reference, as torch.testing.assert_close
// does it: |actual - expected| <= atol + rtol * |expected|, NaN where NaN, equal infinities,
// integers exactly (unless a tolerance is given for them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "plan/manifest.hpp"

namespace bb {

struct Comparison {
  int64_t count = 0;           // elements compared
  int64_t mismatches = 0;      // elements outside tolerance (unwritten included)
  int64_t unwritten = 0;       // mismatching elements that still hold the poison pattern
  int64_t nonfinite = 0;       // mismatching elements NaN or infinite on one side (or infinities of two signs)
  double max_abs_error = 0.0;  // over finite pairs
  double max_rel_error = 0.0;  // over finite pairs with expected != 0
  // The share of the tolerance the worst finite pair used: max |a - e| / (atol + rtol |e|) (1: at
  // the edge; infinite where a pair differs under a tolerance of 0). A passing output's margin.
  double tolerance_used = 0.0;
  int64_t first_mismatch = -1; // linear index
  double actual_at_first = 0.0;
  double expected_at_first = 0.0;
  bool passed() const { return mismatches == 0; }
};

Comparison compare(DType t, const void* actual, const void* expected, std::size_t n, Tolerance tol);

// The largest finite |expected| (0 for none), and whether any element is NaN or infinite.
struct ExpectedScale {
  double max_abs = 0.0;
  bool nonfinite = false;
};
ExpectedScale expected_scale(DType t, const void* expected, std::size_t n);
// The atol compare() uses: tol.atol, times max(1, scale.max_abs) where tol.scale_atol.
double effective_atol(const Tolerance& tol, const ExpectedScale& scale);
// Whether an output of zeros would pass against `expected`: every element within the tolerance
// of 0 (a case whose outputs are all that small cannot tell an implementation that writes zeros
// from a right one).
bool zeros_would_pass(const Tolerance& tol, const ExpectedScale& scale);

// "[3, 17]" for a linear index into a C-ordered shape.
std::string format_index(int64_t linear, const std::vector<int64_t>& shape);

}  // namespace bb
