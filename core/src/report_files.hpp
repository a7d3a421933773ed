// The report files of a finished run. Each is a function of the RunRecord alone, written
// atomically (a temp file, then a rename), so the live run and `backendbench merge` write the
// same files.
//
//   results.json           the whole run (schema: run_record.hpp)
//   junit.xml              one testcase per (op, implementation, case)
//   operator_summary.csv   BackendBench's columns, then ours
//   OVERALL_SUMMARY.md     sized for a CI job summary
//   report.html            self-contained: inline CSS, JS and SVG
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "expected.hpp"
#include "reporter.hpp"
#include "regression.hpp"
#include "run_record.hpp"

namespace bb {

Status write_json_report(const RunRecord& run, const std::filesystem::path& file);
Status write_junit_report(const RunRecord& run, const std::filesystem::path& file);
Status write_csv_report(const RunRecord& run, const std::filesystem::path& file);
Status write_markdown_report(const RunRecord& run, const std::filesystem::path& file);
Status write_html_report(const RunRecord& run, const std::filesystem::path& file);

// The string each writer writes, for tests and for callers that print it.
std::string junit_xml(const RunRecord& run);
std::string operator_summary_csv(const RunRecord& run);
std::string overall_summary_md(const RunRecord& run);
// The run's regressions against an earlier run, shown in its HTML report when `compare --html`
// writes it (nightly.sh does, into the new run's log dir).
struct ReportComparison {
  std::string base_label;  // the earlier run, as compare named it
  const RunComparison* comparison = nullptr;
};
std::string html_report(const RunRecord& run, const ReportComparison* compared = nullptr);

// Where each report goes: any number of files per format (the log dir's, and a flag's copy).
struct ReportPaths {
  std::vector<std::filesystem::path> json, junit, csv, markdown, html;
};
// Every report in a log dir, under the names above.
ReportPaths log_dir_reports(const std::filesystem::path& dir);
// Writes each report to each of its paths; the first failure is returned after all were tried.
Status write_reports(const RunRecord& run, const ReportPaths& paths);

// Writes `content` to `file` through a temp file beside it and a rename.
Status write_file_atomically(const std::filesystem::path& file, const std::string& content);

// Gathers a run's events into a RunRecord and writes the reports when the run finishes.
std::unique_ptr<Reporter> make_report_files_reporter(ReportPaths paths);

}  // namespace bb
