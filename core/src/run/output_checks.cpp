#include "run/output_checks.hpp"

#include <cstring>

#include <fmt/format.h>

#include "host_buffer.hpp"
#include "parallel.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/allclose.hpp"

namespace bb {

std::string format_value(double v) { return fmt::format("{:.9g}", v); }

namespace {
constexpr std::size_t kGuard = HostBuffer::kGuardBytes;

std::string describe_overrun(const HostBuffer::Overrun& o) {
  std::string s;
  if (o.after) s += fmt::format("wrote up to {} byte(s) past the end", o.after);
  if (o.before) s += fmt::format("{}wrote up to {} byte(s) before the start", s.empty() ? "" : " and ", o.before);
  return s;
}

int64_t differing_elements(const uint8_t* a, const uint8_t* b, DType t, int64_t n, int64_t* first) {
  const size_t es = dtype_size(t);
  int64_t diff = 0;
  *first = -1;
  for (int64_t k = 0; k < n; ++k)
    if (std::memcmp(a + k * es, b + k * es, es) != 0) {
      if (*first < 0) *first = k;
      ++diff;
    }
  return diff;
}
}  // namespace

CallBuffersView::CallBuffersView(const ConcreteCase& c, const SealedBlob& blob) : c_(c), blob_(blob) {
  offsets_ = buffers_layout(c).offsets;
}
const uint8_t* CallBuffersView::raw_input(std::size_t i) const { return blob_.data() + offsets_[i]; }
const uint8_t* CallBuffersView::input(std::size_t i) const { return raw_input(i) + kGuard; }
const uint8_t* CallBuffersView::raw_output(std::size_t j) const {
  return c_.outputs[j].inplace_input >= 0 ? nullptr : blob_.data() + offsets_[c_.inputs.size() + j];
}
const uint8_t* CallBuffersView::output(std::size_t j) const {
  const int in = c_.outputs[j].inplace_input;
  return in >= 0 ? input(static_cast<std::size_t>(in)) : raw_output(j) + kGuard;
}

std::optional<Judgement> judge_call(const ConcreteCase& c, const CallBuffersView& got, const SealedBlob& inputs,
                                    const CallBuffersView& expected, ErrorFigures* figures) {
  // Writes outside the tensors.
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (auto o = guard_overrun(got.raw_input(i), c.inputs[i].nbytes()); o.any())
      return Judgement{Verdict::out_of_bounds, fmt::format("input '{}': {} ({} bytes)", c.inputs[i].name, describe_overrun(o), c.inputs[i].nbytes()), {}};
  for (size_t j = 0; j < c.outputs.size(); ++j)
    if (const uint8_t* raw = got.raw_output(j))
      if (auto o = guard_overrun(raw, c.outputs[j].nbytes()); o.any())
        return Judgement{Verdict::out_of_bounds,
                         fmt::format("output '{}': {} ({} bytes)", c.outputs[j].name, describe_overrun(o), c.outputs[j].nbytes()), {}};

  // Inputs that are not in-place targets must come back unchanged.
  const auto in_offsets = inputs_layout(c).offsets;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    bool aliased = false;
    for (const auto& o : c.outputs) aliased = aliased || o.inplace_input == static_cast<int>(i);
    if (aliased) continue;
    const auto& t = c.inputs[i];
    const uint8_t* pristine = inputs.data() + in_offsets[i];
    if (std::memcmp(got.input(i), pristine, t.nbytes()) == 0) continue;
    int64_t first = 0;
    const int64_t changed = differing_elements(got.input(i), pristine, t.dtype, t.numel(), &first);
    return Judgement{Verdict::input_mutated,
                     fmt::format("input '{}': {} of {} elements changed; first at {}: was {}, now {}", t.name, changed, t.numel(),
                                 format_index(first, t.shape), format_value(load_element(t.dtype, pristine, static_cast<size_t>(first))),
                                 format_value(load_element(t.dtype, got.input(i), static_cast<size_t>(first)))),
                     {}};
  }

  // Values.
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    const Comparison cmp = compare(o.dtype, got.output(j), expected.output(j), static_cast<size_t>(o.numel()), o.tolerance);
    if (figures) {
      figures->max_abs_error = std::max(figures->max_abs_error, cmp.max_abs_error);
      figures->max_rel_error = std::max(figures->max_rel_error, cmp.max_rel_error);
      if (figures->output.empty() || cmp.tolerance_used > figures->tolerance_used) figures->output = o.name, figures->tolerance_used = cmp.tolerance_used;
    }
    if (cmp.passed()) continue;
    // A value variant's atol grows with what is expected: the figure compared with, and how it came.
    const double atol = effective_atol(o.tolerance, o.tolerance.scale_atol ? expected_scale(o.dtype, expected.output(j), static_cast<size_t>(o.numel()))
                                                                          : ExpectedScale{});
    const std::string atol_text =
        atol == o.tolerance.atol ? fmt::format("atol {}", atol) : fmt::format("atol {} scaled by the largest expected value to {}", o.tolerance.atol, format_value(atol));
    Mismatch mm{o.name, cmp.mismatches, cmp.count, cmp.unwritten, cmp.max_abs_error, cmp.max_rel_error,
                format_index(cmp.first_mismatch, o.shape), cmp.actual_at_first, cmp.expected_at_first, atol, o.tolerance.rtol};
    if (cmp.unwritten > 0)
      return Judgement{Verdict::unwritten,
                       fmt::format("output '{}': {} of {} elements left unwritten (still poisoned); first at {}", o.name, cmp.unwritten,
                                   cmp.count, mm.first_index),
                       mm};
    // The errors are over finite pairs: where NaN or infinities made the difference, say so
    // rather than "max abs error 0".
    std::string errors;
    if (cmp.nonfinite < cmp.mismatches)
      errors = fmt::format("max abs error {}, max rel error {}", format_value(cmp.max_abs_error), format_value(cmp.max_rel_error));
    if (cmp.nonfinite > 0)
      errors += fmt::format("{}{} NaN or infinite on one side only", errors.empty() ? "" : "; ", cmp.nonfinite == cmp.mismatches ? "all" : std::to_string(cmp.nonfinite));
    return Judgement{Verdict::fail,
                     fmt::format("output '{}': {} of {} elements differ ({}, rtol {}); {}; first at {}: got {}, expected {}", o.name,
                                 cmp.mismatches, cmp.count, atol_text, o.tolerance.rtol, errors, mm.first_index,
                                 format_value(cmp.actual_at_first), format_value(cmp.expected_at_first)),
                     mm};
  }
  return std::nullopt;
}

bool zeros_would_pass_all(const ConcreteCase& c, const CallBuffersView& expected) {
  for (std::size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (!zeros_would_pass(o.tolerance, expected_scale(o.dtype, expected.output(j), static_cast<std::size_t>(o.numel())))) return false;
  }
  return true;
}

std::string outputs_differ(const ConcreteCase& c, const CallBuffersView& got, const CallBuffersView& expected) {
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    const Comparison cmp = compare(o.dtype, got.output(j), expected.output(j), static_cast<size_t>(o.numel()), o.tolerance);
    if (cmp.passed()) continue;
    if (cmp.unwritten == cmp.count) return fmt::format("output '{}' was left unwritten (still poisoned): the call skipped the work", o.name);
    return fmt::format("output '{}': {} of {} elements differ; first at {}: got {}, expected {}", o.name, cmp.mismatches, cmp.count,
                       format_index(cmp.first_mismatch, o.shape), format_value(cmp.actual_at_first), format_value(cmp.expected_at_first));
  }
  return "";
}

std::string reference_unwritten(const ConcreteCase& c, const CallBuffersView& expected) {
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (o.inplace_input >= 0) continue;
    // In parallel, element by element against the pattern (a 64M-element output took 0.3 s on one core).
    uint8_t pattern[8];
    poison_element(o.dtype, pattern);
    const std::size_t es = dtype_size(o.dtype), n = static_cast<std::size_t>(o.numel());
    const uint8_t* data = expected.output(j);
    std::vector<int64_t> counts(chunk_count(n));
    for_each_chunk(n, counts.size(), [&](std::size_t k, std::size_t lo, std::size_t hi) {
      int64_t found = 0;
      for (std::size_t i = lo; i < hi; ++i) found += std::memcmp(data + i * es, pattern, es) == 0 ? 1 : 0;
      counts[k] = found;
    });
    int64_t unwritten = 0;
    for (int64_t k : counts) unwritten += k;
    if (unwritten > 0) return fmt::format("the reference left {} of {} elements of output '{}' unwritten", unwritten, o.numel(), o.name);
  }
  return "";
}

std::string outputs_not_identical(const ConcreteCase& c, const CallBuffersView& a, const CallBuffersView& b) {
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (std::memcmp(a.output(j), b.output(j), o.nbytes()) == 0) continue;
    int64_t first = 0;
    const int64_t diff = differing_elements(a.output(j), b.output(j), o.dtype, o.numel(), &first);
    return fmt::format("output '{}': two calls on the same inputs differ in {} of {} elements", o.name, diff, o.numel());
  }
  return "";
}

}  // namespace bb
