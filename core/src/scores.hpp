// Scores of a run: per implementation, per op and overall.
//
//   correctness rate   passed tests / tests that ran (SKIPPED excluded)
//   speedup            an implementation's geomean over its timed performance cases of each
//                      case's paired speedup (paired.hpp), with an interval combining the
//                      cases' intervals; an interval holding 1.0 is "no significant difference"
//   geomean speedup    per op and overall, over fully correct implementations only, of their
//                      point speedups, significant or not (setting the others to 1.0 would bias
//                      it); the failed ones are counted beside it, never as 1.0
//   perf@p             share of the implementations that ran (not every test SKIPPED) that are
//                      fully correct and significantly faster than p: the low end of the
//                      speedup's interval above p (its point speedup, where no interval is
//                      known) (KernelBench's fast_p, with the noise taken into account)
//
// Two rules. standard (above): a case the implementation refused (Outcome::refused) is SKIPPED
// and counts for nothing; a failed implementation has no speedup and is counted beside the
// geomean. strict (--strict, for grading, as BackendBench-py scores): a refusal is a failure
// like any non-PASS; an implementation's speedup is the geomean over all its performance cases
// with each case that did not pass counted as no speedup (1.0), and the geomeans per op and
// overall take every implementation that ran with that speedup. perf@p is the same formula
// under both (fully correct and faster than p), so a refusal there is a failure too. A SKIPPED
// that is the machine's (no device, a package that will not import) or the reference's counts
// for nothing under both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results.hpp"

namespace bb {

enum class ScoreRule { standard, strict };
const char* score_rule_name(ScoreRule r);  // "standard" | "strict"
std::optional<ScoreRule> parse_score_rule(const std::string& name);
// What the rule does, in a few words, for the reports ("" for standard).
const char* score_rule_note(ScoreRule r);

struct ImplScore {
  std::string op, impl;
  // failed: any verdict but PASS and SKIPPED, and under the strict rule its refusals too;
  // skipped: the SKIPPED that count for nothing; refused: its own refusals, under either rule.
  int tests = 0, passed = 0, failed = 0, skipped = 0, refused = 0;
  bool fully_correct = false;                         // no failure and at least one pass
  bool ran() const { return tests > skipped; }        // not every test SKIPPED
  std::optional<double> speedup;
  std::optional<double> speedup_low, speedup_high;  // its interval, when every timed case had one
  // Where it was timed in more than one mode (fwd, bwd: plan/mode.hpp): the speedup of each, as
  // `speedup` is of all (the same rule), in the modes' order.
  std::vector<std::pair<std::string, double>> speedup_by_mode;
  // The speedup's interval lies wholly above (or below) p; without an interval, the point does.
  bool faster_than(double p) const { return speedup && (speedup_low ? *speedup_low > p : *speedup > p); }
  bool significant() const { return !speedup_low || *speedup_low > 1.0 || *speedup_high < 1.0; }
};

struct OpScore {
  std::string op;
  int impls = 0, correct_impls = 0;  // implementations that ran, and those fully correct
  std::optional<double> geomean_speedup;
  // Where its implementations were timed in more than one mode: each mode's geomean over the
  // speedups in it of those timed in it.
  std::vector<std::pair<std::string, double>> speedup_by_mode;
};

struct Scores {
  ScoreRule rule = ScoreRule::standard;
  std::vector<ImplScore> impls;
  std::vector<OpScore> ops;
  int tests = 0, passed = 0, failed = 0, skipped = 0;
  double correctness_rate = 0.0;
  std::optional<double> geomean_speedup;
  std::vector<std::pair<double, double>> perf_at;  // (p, share)
};

std::optional<double> geomean(const std::vector<double>& values);

// " (fwd 1.000x, bwd 0.729x)": a speedup_by_mode as the reports print it after the speedup; ""
// where it was timed in one mode.
std::string mode_speedups_text(const std::vector<std::pair<std::string, double>>& by_mode);

// Whether a test leaves the run's exit status at 0: PASS, or SKIPPED (under the strict rule,
// not by the implementation's own refusal).
bool passes(const TestResult& r, ScoreRule rule);

// `impl_order` lists every scored implementation as (op, impl), so that one whose tests all
// vanished still counts; `ps` are the perf@p thresholds.
Scores compute_scores(const std::vector<TestResult>& results, const std::vector<std::pair<std::string, std::string>>& impl_order,
                      const std::vector<double>& ps, ScoreRule rule = ScoreRule::standard);

}  // namespace bb
