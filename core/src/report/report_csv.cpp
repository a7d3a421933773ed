// operator_summary.csv: one row per op, then one row per implementation, told apart by the
// `level` column ("operator" or "implementation"). The op rows come first, so a reader that wants
// BackendBench's per-operator table takes the rows whose level is "operator" (or the first
// len(ops) rows).
//
// Columns, first as BackendBench's Python suite names them:
//   operator            the op
//   total_tests         tests that ran (SKIPPED left out, counted in skipped_tests), every repeat
//   passed_tests        PASS
//   failed_tests        any verdict but PASS and SKIPPED
//   correctness_rate    passed_tests / total_tests (empty when no test ran)
//   avg_speedup         op: the arithmetic mean of its fully correct implementations' speedups;
//                       implementation: the mean of its timed cases' speedups
//   geomean_speedup     op: the geomean over its fully correct implementations (scores.hpp);
//                       implementation: its speedup, the geomean over its timed cases
//   max_absolute_error  the largest error of the tests' outputs against the reference, passing
//                       tests too (empty: no values compared)
//   max_relative_error
// Then ours:
//   level                    operator | implementation
//   implementation           "<op>__<name>" on implementation rows, empty on op rows
//   status                   implementation: correct | failed | skipped | not run; op: the same
//                            word for the op as a whole (correct: every implementation that ran)
//   implementations          implementations that ran (not every test SKIPPED); 1 or 0 per row
//   correct_implementations  those fully correct (no failure, at least one pass)
//   skipped_tests            SKIPPED
//   verdicts                 counts of verdicts other than PASS: "CRASH=3 FAIL=1"
//   perf@<p>                 per threshold p: the share of implementations that ran which are
//                            fully correct and significantly faster than p times the baseline:
//                            the low end of the speedup's interval above p (scores.hpp) (1 or 0
//                            per implementation; empty when it did not run)
//   timed_tests              tests with a timing
//   baseline, reference, reference_kind, seed   from the op's report
//   devices                  the devices its tests ran on, "cpu;cuda:0"
//   speedup_low, speedup_high  implementation: the speedup's 99% interval (paired timing;
//                            RUNNING.md "Speedups"); empty on op rows
//
// A failed implementation never has a speedup: its speedup cells are empty, never 1.0. Numbers
// are plain decimals; fields are quoted as RFC 4180 says (CRLF line ends).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/report_files.hpp"
#include "report/report_text.hpp"

namespace bb {

namespace {

std::string number(const std::optional<double>& x, const char* format = "{:.10g}") {
  return finite(x) ? fmt::format(fmt::runtime(format), *x) : "";
}

// What the op and implementation rows gather from the tests.
struct Tally {
  std::optional<double> max_abs, max_rel;
  std::vector<double> speedups;  // timed, passing cases
  std::size_t timed = 0;
  std::set<std::string> devices;
  void add(const TestResult& t) {
    // The errors of every test compared (passing ones too), else a mismatch's (a run before them).
    const double a = t.outcome.errors ? t.outcome.errors->max_abs_error : t.outcome.mismatch ? t.outcome.mismatch->max_abs_error : NAN;
    const double r = t.outcome.errors ? t.outcome.errors->max_rel_error : t.outcome.mismatch ? t.outcome.mismatch->max_rel_error : NAN;
    if (std::isfinite(a)) max_abs = std::max(max_abs.value_or(0.0), a);
    if (std::isfinite(r)) max_rel = std::max(max_rel.value_or(0.0), r);
    if (t.performance.timing) ++timed;
    if (t.outcome.verdict == Verdict::pass && finite(t.performance.speedup)) speedups.push_back(*t.performance.speedup);
    if (t.outcome.verdict != Verdict::skipped) devices.insert(device_label(t));
  }
};

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ";") + x;
  return out;
}

// What every row reads: the tests' tallies by op and implementation, the ops' reports, the verdicts.
struct SummaryInputs {
  const RunRecord& run;
  std::map<std::string, Tally> op_tally;
  std::map<std::pair<std::string, std::string>, Tally> impl_tally;
  std::map<std::string, std::string> verdicts;
  std::map<std::string, const OpReport*> reports;
  explicit SummaryInputs(const RunRecord& r) : run(r), verdicts(verdict_counts_by_impl(r)) {
    for (const auto& t : run.tests) {
      op_tally[t.id.op].add(t);
      impl_tally[{t.id.op, t.id.impl}].add(t);
    }
    for (const auto& op : run.ops) reports[op.op] = &op;
  }
  // The op's baseline, reference, reference kind and seed.
  void op_columns(const std::string& op, std::vector<std::string>& cells) const {
    const auto it = reports.find(op);
    const OpReport* r = it == reports.end() ? nullptr : it->second;
    cells.push_back(r ? r->baseline : "");
    cells.push_back(r ? r->reference : "");
    cells.push_back(r ? r->reference_kind : "");
    cells.push_back(r ? std::to_string(r->seed) : "");
  }
};

// The tally of `key`, empty where no test counted toward it.
template <typename Key>
const Tally& tally_of(const std::map<Key, Tally>& tallies, const Key& key) {
  static const Tally none;
  const auto it = tallies.find(key);
  return it == tallies.end() ? none : it->second;
}

std::string rate(int passed, int ran) { return ran > 0 ? fmt::format("{:.10g}", static_cast<double>(passed) / ran) : std::string(); }

std::vector<std::string> operator_row(const SummaryInputs& in, const OpScore& os) {
  const RunRecord& run = in.run;
  int passed = 0, failed = 0, skipped = 0, ran_impls = 0;
  std::vector<double> correct_speedups;
  std::vector<const ImplScore*> impls;
  std::string counts;
  std::map<std::string, int> by_verdict;
  for (const auto& is : run.scores.impls) {
    if (is.op != os.op) continue;
    impls.push_back(&is);
    passed += is.passed, failed += is.failed, skipped += is.skipped;
    ran_impls += is.ran() ? 1 : 0;
    if (is.fully_correct && finite(is.speedup)) correct_speedups.push_back(*is.speedup);
  }
  for (const auto& t : run.tests)
    if (t.id.op == os.op && t.outcome.verdict != Verdict::pass) ++by_verdict[verdict_name(t.outcome.verdict)];
  for (const auto& [v, n] : by_verdict) counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", v, n);
  const Tally& tally = tally_of(in.op_tally, os.op);
  const std::string status = ran_impls == 0 ? (impls.empty() || skipped == 0 ? "not run" : "skipped")
                             : os.correct_impls == os.impls ? "correct"
                                                            : "failed";
  std::vector<std::string> cells = {os.op,
                                    std::to_string(passed + failed),
                                    std::to_string(passed),
                                    std::to_string(failed),
                                    rate(passed, passed + failed),
                                    number(mean(correct_speedups)),
                                    number(os.geomean_speedup),
                                    number(tally.max_abs),
                                    number(tally.max_rel),
                                    "operator",
                                    "",
                                    status,
                                    std::to_string(os.impls),
                                    std::to_string(os.correct_impls),
                                    std::to_string(skipped),
                                    counts};
  for (double p : run.perf_p) {
    int fast = 0;
    for (const auto* is : impls) fast += (is->fully_correct && is->faster_than(p)) ? 1 : 0;  // as scores.hpp counts
    cells.push_back(ran_impls > 0 ? fmt::format("{:.10g}", static_cast<double>(fast) / ran_impls) : "");
  }
  cells.push_back(std::to_string(tally.timed));
  in.op_columns(os.op, cells);
  cells.push_back(joined(tally.devices));
  cells.push_back("");  // speedup_low, speedup_high: implementations only
  cells.push_back("");
  return cells;
}

std::vector<std::string> implementation_row(const SummaryInputs& in, const ImplScore& is) {
  const Tally& tally = tally_of(in.impl_tally, std::make_pair(is.op, is.impl));
  const bool correct = is.fully_correct;
  auto it = in.verdicts.find(is.impl);
  std::vector<std::string> cells = {is.op,
                                    std::to_string(is.passed + is.failed),
                                    std::to_string(is.passed),
                                    std::to_string(is.failed),
                                    rate(is.passed, is.passed + is.failed),
                                    correct ? number(mean(tally.speedups)) : "",
                                    correct ? number(is.speedup) : "",
                                    number(tally.max_abs),
                                    number(tally.max_rel),
                                    "implementation",
                                    is.impl,
                                    impl_status(is),
                                    is.ran() ? "1" : "0",
                                    correct ? "1" : "0",
                                    std::to_string(is.skipped),
                                    it == in.verdicts.end() ? "" : it->second};
  for (double p : in.run.perf_p) cells.push_back(!is.ran() ? "" : (correct && is.faster_than(p)) ? "1" : "0");
  cells.push_back(std::to_string(tally.timed));
  in.op_columns(is.op, cells);
  cells.push_back(joined(tally.devices));
  cells.push_back(correct ? number(is.speedup_low) : "");
  cells.push_back(correct ? number(is.speedup_high) : "");
  return cells;
}

}  // namespace

std::string operator_summary_csv(const RunRecord& run) {
  std::vector<std::string> header = {"operator",        "total_tests",        "passed_tests",      "failed_tests",
                                     "correctness_rate", "avg_speedup",        "geomean_speedup",   "max_absolute_error",
                                     "max_relative_error", "level",            "implementation",    "status",
                                     "implementations",  "correct_implementations", "skipped_tests", "verdicts"};
  for (double p : run.perf_p) header.push_back(fmt::format("perf@{:g}", p));
  for (const char* h : {"timed_tests", "baseline", "reference", "reference_kind", "seed", "devices", "speedup_low", "speedup_high"})
    header.push_back(h);
  std::string out;
  auto row = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_field(cells[i]);
    out += "\r\n";
  };
  row(header);
  const SummaryInputs in(run);
  for (const auto& os : run.scores.ops) row(operator_row(in, os));
  for (const auto& is : run.scores.impls) row(implementation_row(in, is));
  return out;
}

}  // namespace bb
