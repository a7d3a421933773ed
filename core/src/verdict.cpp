#include "verdict.hpp"

#include <iterator>

namespace bb {

namespace {
// In the enum's order (checked below).
constexpr VerdictRow kVerdicts[] = {
    {Verdict::pass, "PASS", VerdictKind::passed},
    {Verdict::fail, "FAIL", VerdictKind::failed},
    {Verdict::error, "ERROR", VerdictKind::error},
    {Verdict::crash, "CRASH", VerdictKind::error},
    {Verdict::timeout, "TIMEOUT", VerdictKind::error},
    {Verdict::unwritten, "UNWRITTEN", VerdictKind::failed},
    {Verdict::input_mutated, "INPUT_MUTATED", VerdictKind::failed},
    {Verdict::out_of_bounds, "OUT_OF_BOUNDS", VerdictKind::failed},
    {Verdict::nondeterministic, "NONDETERMINISTIC", VerdictKind::failed},
    {Verdict::implausible, "IMPLAUSIBLE", VerdictKind::failed},
    {Verdict::skipped, "SKIPPED", VerdictKind::skipped},
};

constexpr bool in_order() {
  for (std::size_t i = 0; i < std::size(kVerdicts); ++i)
    if (static_cast<std::size_t>(kVerdicts[i].verdict) != i) return false;
  return std::size(kVerdicts) == static_cast<std::size_t>(Verdict::skipped) + 1;
}
static_assert(in_order(), "kVerdicts: one row per Verdict, in the enum's order");
}  // namespace

const VerdictRow& verdict_row(Verdict v) { return kVerdicts[static_cast<std::size_t>(v)]; }

const char* verdict_name(Verdict v) { return verdict_row(v).name; }

std::optional<Verdict> parse_verdict(const std::string& name) {
  for (const auto& row : kVerdicts)
    if (name == row.name) return row.verdict;
  return std::nullopt;
}

}  // namespace bb
