// What every report file shares: atomic writes, the log dir's names, and the reporter that
// gathers a run into a RunRecord and writes the files when it ends. Each format has its own
// file (report_junit.cpp, report_csv.cpp, report_markdown.cpp, report_html.cpp).
#include "report_files.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

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

Status write_json_report(const RunRecord& run, const std::filesystem::path& file) {
  const std::string text = to_json(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (file == "-") {  // --json -: stdout
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return Ok{};
  }
  return write_file_atomically(file, text);
}
Status write_junit_report(const RunRecord& run, const std::filesystem::path& file) { return write_file_atomically(file, junit_xml(run)); }
Status write_csv_report(const RunRecord& run, const std::filesystem::path& file) {
  return write_file_atomically(file, operator_summary_csv(run));
}
Status write_markdown_report(const RunRecord& run, const std::filesystem::path& file) {
  return write_file_atomically(file, overall_summary_md(run));
}
Status write_html_report(const RunRecord& run, const std::filesystem::path& file) { return write_file_atomically(file, html_report(run)); }

ReportPaths log_dir_reports(const std::filesystem::path& dir) {
  ReportPaths p;
  p.json = {dir / "results.json"};
  p.junit = {dir / "junit.xml"};
  p.csv = {dir / "operator_summary.csv"};
  p.markdown = {dir / "OVERALL_SUMMARY.md"};
  p.html = {dir / "report.html"};
  return p;
}

Status write_reports(const RunRecord& run, const ReportPaths& paths) {
  std::optional<Failure> first;
  auto attempt = [&](const std::vector<std::filesystem::path>& files, Status (*writer)(const RunRecord&, const std::filesystem::path&)) {
    for (const auto& file : files)
      if (auto s = writer(run, file); !s && !first) first = s.error();
  };
  attempt(paths.json, write_json_report);
  attempt(paths.junit, write_junit_report);
  attempt(paths.csv, write_csv_report);
  attempt(paths.markdown, write_markdown_report);
  attempt(paths.html, write_html_report);
  if (first) return *first;
  return Ok{};
}

namespace {

class ReportFilesReporter final : public Reporter {
 public:
  explicit ReportFilesReporter(ReportPaths paths) : paths_(std::move(paths)) {}
  void run_started(const RunInfo& info) override {
    run_.command = info.command;
    run_.started_at = info.started_at;
    run_.host = info.host;
    run_.options = info.options;
    run_.root = info.root.string();
  }
  void sweep_planned(const RunInfo& info, std::size_t) override {
    run_.provenance = info.provenance;
    run_.sweep_id = info.sweep_id;
    run_.shard = {info.shard_index, info.shard_count};
    run_.repeats = info.repeats;
    run_.perf_p = info.perf_p;
  }
  void op_planned(const OpReport& op) override { run_.ops.push_back(op); }
  void device_described(const nlohmann::json& d) override { run_.devices.push_back(d); }
  void run_finished(const RunSummary& s) override {
    run_.finished_at = s.finished_at;
    run_.wall_time = s.wall_time;
    run_.measured_time = s.measured_time;
    run_.exit_code = s.exit_code;
    run_.interrupted = s.interrupted;
    run_.complete = s.interrupted.empty();
    run_.scores = s.scores;
    run_.tests = s.results;  // in sweep order
    run_.phases = s.phases;
    run_.workers = s.workers;
    run_.host_load = s.host_load;
    if (auto st = write_reports(run_, paths_); !st) fmt::print(stderr, "error: {}\n", st.error().message);
  }

 private:
  ReportPaths paths_;
  RunRecord run_;
};

}  // namespace

std::unique_ptr<Reporter> make_report_files_reporter(ReportPaths paths) { return std::make_unique<ReportFilesReporter>(std::move(paths)); }

}  // namespace bb
