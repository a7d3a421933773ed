// The verdicts, one row each (verdict.cpp): a new verdict is a row there and the logic that
// gives it. Every report groups a verdict by its kind, never by its name, so none of them
// changes for a new one: HTML's badge class and the console's colour follow the kind, JUnit
// writes a failed one as a <failure> and an error as an <error>, and scores count only PASS
// (and SKIPPED by their rule, scores.hpp).
#pragma once

#include <optional>
#include <string>

namespace bb {

enum class Verdict { pass, fail, error, crash, timeout, unwritten, input_mutated, out_of_bounds, nondeterministic, implausible, skipped };

enum class VerdictKind {
  passed,
  skipped,  // not run, for a reason the implementation or the case gave
  failed,   // ran to its end, and its outputs or its timing were wrong
  error,    // did not run to its end (returned an error, crashed, ran out of time)
};

struct VerdictRow {
  Verdict verdict;
  const char* name;  // as results.json and every report write it
  VerdictKind kind;
};

const VerdictRow& verdict_row(Verdict v);
const char* verdict_name(Verdict v);  // "PASS", "FAIL", ...
std::optional<Verdict> parse_verdict(const std::string& name);
inline VerdictKind verdict_kind(Verdict v) { return verdict_row(v).kind; }
// Neither passed nor skipped: what a report lists as a failure.
inline bool is_failure(Verdict v) { return verdict_kind(v) == VerdictKind::failed || verdict_kind(v) == VerdictKind::error; }

}  // namespace bb
