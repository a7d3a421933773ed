// The report files of a finished run. Each is a function of the RunRecord alone, written
// atomically (a temp file, then a rename), so the live run and `backendbench merge` write the
// same files. The formats are one table (report_formats): a flag, a file name, a renderer.
//
//   results.json           the whole run (schema: run_record.hpp)
//   junit.xml              one testcase per (op, implementation, case)
//   operator_summary.csv   BackendBench's columns, then ours
//   tests.csv              one row per test (case_table.hpp)
//   OVERALL_SUMMARY.md     sized for a CI job summary
//   report.html            self-contained: inline CSS, JS and SVG
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/regression.hpp"
#include "compare/run_store.hpp"
#include "expected.hpp"
#include "report/reporter.hpp"
#include "run_record.hpp"

namespace bb {

// The text of each report, a function of the run alone.
std::string results_json(const RunRecord& run);
std::string junit_xml(const RunRecord& run);
std::string operator_summary_csv(const RunRecord& run);
std::string overall_summary_md(const RunRecord& run);
// The run's regressions against an earlier run, shown in its HTML report when `compare --html`
// writes it (nightly.sh does, into the new run's log dir).
struct ReportComparison {
  std::string base_label;  // the earlier run, as compare named it
  const RunComparison* comparison = nullptr;
  // Against a store of runs (run_store.hpp): each test's trend over them, and the runs' labels
  // (oldest first), shown under the comparison.
  const std::vector<TestTrend>* trends = nullptr;
  std::vector<std::string> trend_runs;
};
std::string html_report(const RunRecord& run, const ReportComparison* compared = nullptr);

// The report formats: a new format is a row here and a renderer above. `flag` writes a copy to
// a file of the user's choosing (`-`: stdout, where `to_stdout`); `file_name` is its name in a
// log dir.
struct ReportFormat {
  const char* flag;       // "--json"
  const char* file_name;  // "results.json"
  const char* help;       // the flag's line in --help
  std::string (*render)(const RunRecord& run);
  bool to_stdout = false;  // `FLAG -` writes to stdout
};
const std::vector<ReportFormat>& report_formats();

// Where the reports go: a format and a file, as many as asked (the log dir's, and flags' copies).
struct ReportFile {
  const ReportFormat* format;
  std::filesystem::path file;
};
using ReportPaths = std::vector<ReportFile>;
// Every report in a log dir, under its format's file name.
ReportPaths log_dir_reports(const std::filesystem::path& dir);
// `paths` with `copy` of `format` added, unless that file is in it already.
void add_report_copy(ReportPaths& paths, const ReportFormat& format, const std::filesystem::path& copy);
// Writes each report to each of its paths; the first failure is returned after all were tried.
Status write_reports(const RunRecord& run, const ReportPaths& paths);

// Writes `content` to `file` through a temp file beside it and a rename.
Status write_file_atomically(const std::filesystem::path& file, const std::string& content);

// Writes the reports when the run finishes.
std::unique_ptr<Reporter> make_report_files_reporter(ReportPaths paths);

}  // namespace bb
