#include "scores.hpp"

#include "plan/mode.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "measure/paired.hpp"

namespace bb {

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) {
    if (!(v > 0)) return std::nullopt;
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

bool passes(const TestResult& r, ScoreRule rule) {
  if (r.outcome.verdict == Verdict::pass) return true;
  return r.outcome.verdict == Verdict::skipped && !(rule == ScoreRule::strict && r.outcome.refused);
}

const char* score_rule_name(ScoreRule r) { return r == ScoreRule::strict ? "strict" : "standard"; }

std::optional<ScoreRule> parse_score_rule(const std::string& name) {
  if (name == "standard") return ScoreRule::standard;
  if (name == "strict") return ScoreRule::strict;
  return std::nullopt;
}

const char* score_rule_note(ScoreRule r) {
  return r == ScoreRule::strict ? "strict: a refused case is a failure; a case that did not pass counts as no speedup (1.0)" : "";
}

namespace {

// (op, impl) -> mode -> the speedups of its cases in that mode, as its `speedup` takes them.
using ModeSpeedups = std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>>;

// The speedup of each mode, for the implementations with a speedup timed in more than one, and
// for the ops whose implementations were: each mode's geomean over those timed in it.
void split_by_mode(Scores& s, const ModeSpeedups& mode_speedups) {
  std::map<std::string, std::map<std::string, std::vector<double>>> of_op;  // op -> mode -> its implementations' speedups
  for (auto& is : s.impls) {
    const auto found = mode_speedups.find({is.op, is.impl});
    if (!is.speedup || found == mode_speedups.end()) continue;
    const auto& by_mode = found->second;
    for (const auto& row : kModes)
      if (auto it = by_mode.find(row.name); it != by_mode.end())
        if (auto g = geomean(it->second)) {
          if (by_mode.size() > 1) is.speedup_by_mode.emplace_back(row.name, *g);
          if (is.fully_correct || (s.rule == ScoreRule::strict && is.ran())) of_op[is.op][row.name].push_back(*g);
        }
  }
  for (auto& os : s.ops) {
    const auto& by_mode = of_op[os.op];
    if (by_mode.size() > 1)
      for (const auto& row : kModes)
        if (auto it = by_mode.find(row.name); it != by_mode.end())
          if (auto g = geomean(it->second)) os.speedup_by_mode.emplace_back(row.name, *g);
  }
}

}  // namespace

std::string mode_speedups_text(const std::vector<std::pair<std::string, double>>& by_mode) {
  std::string text;
  for (const auto& [mode, x] : by_mode) text += fmt::format("{}{} {:.3f}x", text.empty() ? " (" : ", ", mode, x);
  return text.empty() ? text : text + ")";
}

Scores compute_scores(const std::vector<TestResult>& results, const std::vector<std::pair<std::string, std::string>>& impl_order,
                      const std::vector<double>& ps, ScoreRule rule) {
  const bool strict = rule == ScoreRule::strict;
  Scores s;
  s.rule = rule;
  // Strict: each implementation's performance cases, a case that did not pass as 1.0.
  std::map<std::pair<std::string, std::string>, std::vector<double>> strict_speedups;
  const bool timed = std::any_of(results.begin(), results.end(), [](const TestResult& r) { return r.performance.speedup.has_value(); });
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::map<std::pair<std::string, std::string>, std::vector<double>> speedups;
  // The same, by mode: (op, impl) -> mode -> speedups (strict: with its failures as 1.0).
  ModeSpeedups mode_speedups;
  std::map<std::pair<std::string, std::string>, std::vector<SpeedupInterval>> intervals;
  std::map<std::pair<std::string, std::string>, bool> all_paired;
  for (const auto& [op, impl] : impl_order) {
    index[{op, impl}] = s.impls.size();
    ImplScore is;
    is.op = op;
    is.impl = impl;
    s.impls.push_back(is);
  }
  for (const auto& r : results) {
    auto it = index.find({r.id.op, r.id.impl});
    if (it == index.end()) continue;  // baseline timings and the like are not scored
    ImplScore& is = s.impls[it->second];
    ++is.tests;
    ++s.tests;
    const bool refused = r.outcome.verdict == Verdict::skipped && r.outcome.refused;
    if (refused) ++is.refused;
    const bool counted = r.outcome.verdict != Verdict::skipped || (strict && refused);
    if (r.outcome.verdict == Verdict::pass) ++is.passed, ++s.passed;
    else if (!counted) ++is.skipped, ++s.skipped;
    else ++is.failed, ++s.failed;
    if (strict && counted && r.id.kind == "performance") {
      const double x = r.outcome.verdict != Verdict::pass ? 1.0 : r.performance.speedup.value_or(0.0);
      if (x > 0) {
        strict_speedups[{r.id.op, r.id.impl}].push_back(x);
        mode_speedups[{r.id.op, r.id.impl}][r.id.mode].push_back(x);
      }
    }
    if (r.outcome.verdict == Verdict::pass && r.performance.speedup) {
      speedups[{r.id.op, r.id.impl}].push_back(*r.performance.speedup);
      if (!strict) mode_speedups[{r.id.op, r.id.impl}][r.id.mode].push_back(*r.performance.speedup);
      auto [paired, fresh] = all_paired.try_emplace({r.id.op, r.id.impl}, true);
      if (r.performance.speedup_low && r.performance.speedup_high && *r.performance.speedup > 0)
        intervals[{r.id.op, r.id.impl}].push_back({*r.performance.speedup, *r.performance.speedup_low, *r.performance.speedup_high,
                                             r.performance.speedup_confidence.value_or(kSpeedupConfidence),
                                             static_cast<std::size_t>(r.performance.speedup_pairs.value_or(0)), r.performance.speedup_resolution.value_or(0.0)});
      else
        paired->second = false;
    }
  }
  const int ran = s.tests - s.skipped;
  s.correctness_rate = ran > 0 ? static_cast<double>(s.passed) / ran : 0.0;

  std::map<std::string, size_t> op_index;
  std::map<std::string, std::vector<double>> op_speedups;
  std::vector<double> all;
  for (auto& is : s.impls) {
    is.fully_correct = is.failed == 0 && is.passed > 0;
    if (strict && !is.fully_correct && timed) is.speedup = geomean(strict_speedups[{is.op, is.impl}]);
    if (is.fully_correct) {
      is.speedup = geomean(strict ? strict_speedups[{is.op, is.impl}] : speedups[{is.op, is.impl}]);
      if (is.speedup && all_paired[{is.op, is.impl}])
        if (auto g = geomean_interval(intervals[{is.op, is.impl}])) {
          is.speedup_low = g->low;
          is.speedup_high = g->high;
        }
    }
    if (!op_index.count(is.op)) {
      op_index[is.op] = s.ops.size();
      OpScore os;
      os.op = is.op;
      s.ops.push_back(os);
    }
    OpScore& os = s.ops[op_index[is.op]];
    if (is.ran()) ++os.impls;
    if (is.fully_correct) ++os.correct_impls;
    if ((is.fully_correct || (strict && is.ran())) && is.speedup) {
      op_speedups[is.op].push_back(*is.speedup);
      all.push_back(*is.speedup);
    }
  }
  for (auto& os : s.ops) os.geomean_speedup = geomean(op_speedups[os.op]);
  split_by_mode(s, mode_speedups);
  s.geomean_speedup = geomean(all);
  const auto impls_ran = std::count_if(s.impls.begin(), s.impls.end(), [](const ImplScore& is) { return is.ran(); });
  for (double p : ps) {
    int fast = 0;
    for (const auto& is : s.impls) fast += (is.fully_correct && is.faster_than(p)) ? 1 : 0;
    s.perf_at.emplace_back(p, impls_ran == 0 ? 0.0 : static_cast<double>(fast) / static_cast<double>(impls_ran));
  }
  return s;
}

}  // namespace bb
