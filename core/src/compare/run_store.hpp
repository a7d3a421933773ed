// A store of past runs (issue 40: "compare against the last N nights, a trend per test"): a
// folder whose entries are earlier runs' log dirs (or results files), such as the folder a
// nightly job writes each night's log dir into. `compare STORE NEW` judges NEW against the last
// N runs there together rather than against one night, and shows each test's trend over them.
//
// The baseline made of N runs, test by test (op/impl/case): the newest run's verdict (a test that
// passed in the last run and fails now is a regression, as against one night), and a timing whose
// median is the median of the runs' medians, whose interquartile range spans every run's (the
// lowest q1, the highest q3), and whose noise is the larger of the runs' own and the relative
// spread of their medians (night-to-night drift is noise too). So a slowdown is a regression only
// beyond the threshold, the noise of every recent night, and above the slowest night's q3: a
// night that was merely slow does not make the next one look faster, nor one fast night the next
// one slower.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compare/regression.hpp"
#include "expected.hpp"
#include "run_record.hpp"

namespace bb {

struct StoredRun {
  std::filesystem::path path;  // the log dir or results file
  RunRecord run;
};

struct RunStore {
  std::vector<StoredRun> runs;       // the last N readable runs, oldest first (by started_at)
  std::vector<std::string> skipped;  // entries that could not be read: "PATH: why"
};

// Whether `path` is a store: a folder with no results file of its own whose entries hold runs.
bool is_run_store(const std::filesystem::path& path);

// The last `last` runs of the store at `dir`, oldest first, leaving out `exclude` (NEW itself,
// where it lies in the store: the same path, or the same started_at). An error where none can be
// read (it says which entries were tried and why).
Expected<RunStore> load_run_store(const std::filesystem::path& dir, std::size_t last, const std::filesystem::path& exclude = {},
                                  const std::string& exclude_started_at = "");

// One run standing for the store's runs together (above): the newest's tests and record, each
// timing folded over every run that timed the test.
RunRecord store_baseline(const RunStore& store);

// Each test's median over the store's runs and NEW, oldest first.
struct TestTrend {
  std::string key, op, impl, case_id;
  std::vector<std::optional<double>> medians;  // one per stored run (unset: not timed there), then NEW's
  std::optional<double> vs_median;             // NEW's median against the stored runs' median: (new - m) / m
  bool new_high = false, new_low = false;      // NEW's median above (below) every stored run's
};
std::vector<TestTrend> test_trends(const RunStore& store, const RunRecord& next);

// The trend as text (the tests whose NEW median is a new high or low, at most max_rows: 0 all),
// as Markdown, and as CSV (every test: op, impl, case, one median column per run, new, vs_median).
std::string trend_text(const RunStore& store, const std::vector<TestTrend>& trends, std::size_t max_rows);
std::string trend_markdown(const RunStore& store, const std::vector<TestTrend>& trends, std::size_t max_rows);
std::string trend_csv(const RunStore& store, const std::vector<TestTrend>& trends);

}  // namespace bb
