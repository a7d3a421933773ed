#include "run/allclose.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "host_buffer.hpp"
#include "parallel.hpp"

namespace bb {

namespace {

// compare() over elements [lo, hi); first_mismatch is an index into the whole tensor.
Comparison compare_range(DType t, const void* actual, const void* expected, std::size_t lo, std::size_t hi, Tolerance tol) {
  Comparison c;
  c.count = static_cast<int64_t>(hi - lo);
  const bool floating = is_floating(t);
  for (std::size_t i = lo; i < hi; ++i) {
    bool ok;
    const bool poisoned = is_poison(t, actual, i) && !is_poison(t, expected, i);
    const double a = load_element(t, actual, i);
    const double e = load_element(t, expected, i);
    if (poisoned) {
      ok = false;
    } else if (floating && (std::isnan(a) || std::isnan(e))) {
      ok = std::isnan(a) && std::isnan(e);
    } else if (floating && (std::isinf(a) || std::isinf(e))) {
      ok = a == e;
    } else {
      const double diff = std::fabs(a - e);
      if (diff > c.max_abs_error) c.max_abs_error = diff;
      if (e != 0.0 && diff / std::fabs(e) > c.max_rel_error) c.max_rel_error = diff / std::fabs(e);
      const double allowed = tol.atol + tol.rtol * std::fabs(e);
      const double used = diff == 0.0 ? 0.0 : allowed > 0.0 ? diff / allowed : INFINITY;
      if (used > c.tolerance_used) c.tolerance_used = used;
      if (!floating && t == DType::int64) {
        // doubles lose int64 bits beyond 2^53: compare the integers themselves
        const int64_t ai = static_cast<const int64_t*>(actual)[i];
        const int64_t ei = static_cast<const int64_t*>(expected)[i];
        ok = ai == ei || static_cast<double>(ai > ei ? ai - ei : ei - ai) <= tol.atol + tol.rtol * std::fabs(e);
      } else {
        ok = diff <= allowed;
      }
    }
    if (!ok) {
      if (!poisoned && floating && !(std::isfinite(a) && std::isfinite(e))) ++c.nonfinite;
      if (c.mismatches == 0) {
        c.first_mismatch = static_cast<int64_t>(i);
        c.actual_at_first = a;
        c.expected_at_first = e;
      }
      ++c.mismatches;
      if (poisoned) ++c.unwritten;
    }
  }
  return c;
}

}  // namespace

// Large outputs are compared in chunks on several threads, then the chunks' counts summed, their
// maxima taken, and the first mismatch taken from the first chunk that has one: the same
// Comparison one thread would make.
ExpectedScale expected_scale(DType t, const void* expected, std::size_t n) {
  std::vector<ExpectedScale> parts(chunk_count(n));
  for_each_chunk(n, parts.size(), [&](std::size_t k, std::size_t lo, std::size_t hi) {
    ExpectedScale s;
    for (std::size_t i = lo; i < hi; ++i) {
      const double e = load_element(t, expected, i);
      if (!std::isfinite(e)) s.nonfinite = true;
      else s.max_abs = std::max(s.max_abs, std::fabs(e));
    }
    parts[k] = s;
  });
  ExpectedScale s;
  for (const auto& p : parts) {
    s.max_abs = std::max(s.max_abs, p.max_abs);
    s.nonfinite = s.nonfinite || p.nonfinite;
  }
  return s;
}

double effective_atol(const Tolerance& tol, const ExpectedScale& scale) {
  return tol.scale_atol ? tol.atol * std::max(1.0, scale.max_abs) : tol.atol;
}

bool zeros_would_pass(const Tolerance& tol, const ExpectedScale& scale) {
  // |0 - e| <= atol + rtol |e| for every e: the largest |e| decides (rtol < 1).
  return !scale.nonfinite && scale.max_abs * (1.0 - tol.rtol) <= effective_atol(tol, scale);
}

Comparison compare(DType t, const void* actual, const void* expected, std::size_t n, Tolerance tol) {
  if (tol.scale_atol) {
    tol.atol = effective_atol(tol, expected_scale(t, expected, n));
    tol.scale_atol = false;
  }
  const std::size_t chunks = chunk_count(n);
  if (chunks == 1) return compare_range(t, actual, expected, 0, n, tol);
  std::vector<Comparison> parts(chunks);
  for_each_chunk(n, parts.size(), [&](std::size_t k, std::size_t lo, std::size_t hi) {
    parts[k] = compare_range(t, actual, expected, lo, hi, tol);
  });
  Comparison c;
  for (const Comparison& p : parts) {
    if (c.mismatches == 0 && p.mismatches > 0) {
      c.first_mismatch = p.first_mismatch;
      c.actual_at_first = p.actual_at_first;
      c.expected_at_first = p.expected_at_first;
    }
    c.count += p.count;
    c.mismatches += p.mismatches;
    c.unwritten += p.unwritten;
    c.nonfinite += p.nonfinite;
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs_error);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel_error);
    c.tolerance_used = std::max(c.tolerance_used, p.tolerance_used);
  }
  return c;
}

std::string format_index(int64_t linear, const std::vector<int64_t>& shape) {
  if (shape.empty()) return "[]";
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t s = shape[d] == 0 ? 1 : shape[d];
    idx[d] = linear % s;
    linear /= s;
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

}  // namespace bb
