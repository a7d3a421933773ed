// What every report file shares: the formats' table, atomic writes, and the reporter that writes
// the files when the run ends. Each format has its own
// file (report_junit.cpp, report_csv.cpp, report_markdown.cpp, report_html.cpp).
#include "report/report_files.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "report/case_table.hpp"

namespace bb {

Status write_file_atomically(const std::filesystem::path& file, const std::string& content) {
  const auto tmp = file.string() + fmt::format(".tmp.{}", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(fmt::format("{}: cannot write", tmp));
    out << content;
    out.flush();
    if (!out) return make_error(fmt::format("{}: write failed", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(fmt::format("{}: {}", file.string(), ec.message()));
  }
  return Ok{};
}

std::string results_json(const RunRecord& run) { return to_json(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats = {
      {"--json", "results.json", "write results.json's content to this file too (-: to stdout, the console then on stderr)", results_json, true},
      {"--junit", "junit.xml", "write a JUnit XML report to this file too", junit_xml},
      {"--csv", "operator_summary.csv", "write the operator summary CSV to this file too", operator_summary_csv},
      {"--tests-csv", "tests.csv", "write the per-test CSV (one row per test: shapes, verdict, median, GB/s, TFLOP/s, % of peak, speedup, error figures) to this file too",
       tests_csv},
      {"--md", "OVERALL_SUMMARY.md", "write the Markdown summary to this file too", overall_summary_md},
      {"--html", "report.html", "write the HTML report to this file too", [](const RunRecord& run) { return html_report(run); }},
  };
  return formats;
}

ReportPaths log_dir_reports(const std::filesystem::path& dir) {
  ReportPaths paths;
  for (const auto& f : report_formats()) paths.push_back({&f, dir / f.file_name});
  return paths;
}

void add_report_copy(ReportPaths& paths, const ReportFormat& format, const std::filesystem::path& copy) {
  std::error_code ec;
  const auto normal = [&](const std::filesystem::path& p) { return std::filesystem::absolute(p, ec).lexically_normal(); };
  for (const auto& p : paths)
    if (p.format == &format && normal(p.file) == normal(copy)) return;
  paths.push_back({&format, copy});
}

Status write_reports(const RunRecord& run, const ReportPaths& paths) {
  std::optional<Failure> first;
  // Each format rendered once, in the table's order, then written to each of its files.
  for (const auto& format : report_formats()) {
    std::optional<std::string> text;
    for (const auto& p : paths) {
      if (p.format != &format) continue;
      if (!text) text = format.render(run);
      if (format.to_stdout && p.file == "-") {
        std::fwrite(text->data(), 1, text->size(), stdout);
        std::fflush(stdout);
        continue;
      }
      if (auto s = write_file_atomically(p.file, *text); !s && !first) first = s.error();
    }
  }
  if (first) return *first;
  return Ok{};
}

namespace {

class ReportFilesReporter final : public Reporter {
 public:
  explicit ReportFilesReporter(ReportPaths paths) : paths_(std::move(paths)) {}
  void run_finished(const RunRecord& run) override {
    if (auto st = write_reports(run, paths_); !st) fmt::print(stderr, "error: {}\n", st.error().message);
  }

 private:
  ReportPaths paths_;
};

}  // namespace

std::unique_ptr<Reporter> make_report_files_reporter(ReportPaths paths) { return std::make_unique<ReportFilesReporter>(std::move(paths)); }

}  // namespace bb
