// How a run compares with an earlier one, test by test: what `backendbench compare` decides
// (docs/COMPARE.md). Data in, data and text out; the command does the I/O.
//
// Tests are matched by op/impl/case; the repeats of one test (--repeat) are folded into one:
// it passed only if every repeat passed, and its timing is the median of the repeats' medians.
//
//   correctness regression  PASS in BASE, any verdict but PASS or SKIPPED in NEW
//   lost coverage           PASS in BASE, SKIPPED in NEW (a regression with skip_is_regression)
//   slower                  (a) NEW's median is more than threshold_pct above BASE's, (b) that
//                           relative difference exceeds both runs' noise (relative standard
//                           deviation), and (c) the interquartile ranges do not overlap (NEW's
//                           q1 above BASE's q3). nvbench_compare calls a difference real when it
//                           exceeds the smaller of the two noises, with no threshold and no
//                           overlap test; this is stricter on all three counts.
//   faster                  the mirror image; never a regression
//   inconclusive            beyond the threshold, but within the noise or overlapping; listed
//   timed once              both passed, a timing in one run only; listed, never a regression
//   new / removed / fixed   listed, never a regression
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "results.hpp"
#include "run_record.hpp"

namespace bb {

struct CompareOptions {
  double threshold_pct = 5.0;       // a slowdown of at most this many percent is never a regression
  bool skip_is_regression = false;  // PASS -> SKIPPED is a regression, not only lost coverage
};

// One test's timing as compare sees it, its repeats folded together.
struct TimingSummary {
  double median = 0;     // seconds; of several repeats: the median of their medians
  double q1 = 0, q3 = 0; // of several repeats: the lowest q1 and the highest q3
  // Of several repeats: the larger of their median rel_stdev and the relative standard deviation
  // of their medians (pass-to-pass drift is noise too). NaN: unknown.
  double rel_stdev = 0;
  std::size_t samples = 0;  // summed over repeats
  int repeats = 1;          // repeats that were timed
  std::string mode;         // cold | hot
};

// A test of one run, its repeats folded together.
struct TestSummary {
  std::string op, impl, case_id;
  // PASS only if every repeat passed, SKIPPED only if every repeat was; otherwise the first
  // repeat's verdict that was neither.
  Verdict verdict = Verdict::error;
  int repeats = 0, passed = 0;
  std::string message;  // the message of the repeat that gave the verdict
  std::optional<TimingSummary> timing;
  std::string key() const { return op + "/" + impl + "/" + case_id; }
};

// The tests of a run folded by op/impl/case, in the run's order (first repeat's place).
std::vector<TestSummary> summarize_tests(const std::vector<TestResult>& tests);

// A timing that can be compared: a median that is finite and positive, from some samples.
bool usable_timing(const TimingSummary& t);

enum class TimingChange { same, slower, faster, inconclusive };

struct TimingDecision {
  TimingChange change = TimingChange::same;
  double relative = 0;  // (new - base) / base, of the medians
  std::string why;      // for inconclusive: what held it back; otherwise empty
};

// The performance decision alone (both timings usable).
TimingDecision compare_timing(const TimingSummary& base, const TimingSummary& next, double threshold_pct);

enum class ChangeKind {
  correctness_regression,
  slower,
  lost_coverage,
  inconclusive,
  timed_once,
  faster,
  fixed,
  new_test,
  removed_test,
  still_failing,  // counted, not listed
  unchanged,      // counted, not listed
};
const char* change_kind_name(ChangeKind k);  // "REGRESSION", "SLOWER", ...

struct Change {
  ChangeKind kind = ChangeKind::unchanged;
  bool regression = false;  // counts toward the exit status
  std::string key;          // op/impl/case
  std::string op, impl;
  std::optional<TestSummary> base, next;
  std::optional<double> relative;  // (new - base) / base median, where both were timed
  std::string note;                // one line: why it is in this category
  bool library_changed = false;    // the implementation's library has another sha256 in NEW
  // compare --confirm: what re-timing NEW's library against BASE's, paired, found (empty: not
  // re-timed). A slowdown it does not confirm is no regression.
  std::string confirmation;
};

// The geomean of base median / new median over the tests both runs timed (> 1: NEW is faster).
struct ImplSpeedup {
  std::string op, impl;
  int cases = 0;
  double speedup = 1;
};

struct RunComparison {
  CompareOptions options;
  std::vector<Change> changes;     // every test: regressions first, then by kind, then by size
  std::vector<ImplSpeedup> impls;  // in BASE's order
  std::optional<ImplSpeedup> overall;
  std::vector<std::string> notes;  // about the runs themselves (incomplete, other hosts, ...)
  int count(ChangeKind k) const;
  int regressions() const;
  bool has_regression() const { return regressions() > 0; }
};

RunComparison compare_runs(const RunRecord& base, const RunRecord& next, const CompareOptions& options);

// An implementation's library in a run's provenance: its path (relative to the root) and sha256.
struct RunLibrary {
  std::string path, sha256;
};
std::optional<RunLibrary> library_of(const RunRecord& run, const std::string& op, const std::string& impl);

struct CompareText {
  std::string base_label = "BASE", next_label = "NEW";  // usually the files' paths
  std::size_t max_rows = 0;                             // table rows at most (0: all)
};
// The console form: a header per run, the table (regressions first), speedups, a summary.
std::string comparison_text(const RunComparison& c, const RunRecord& base, const RunRecord& next, const CompareText& t);
// The same in Markdown, for a CI job summary or a PR comment.
std::string comparison_markdown(const RunComparison& c, const RunRecord& base, const RunRecord& next, const CompareText& t);

}  // namespace bb
