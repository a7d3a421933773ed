// backendbench [OPTIONS]: the run. Discover the ops of a custom-ops root, check every
// implementation against its reference, time it, score it, and write the results: the command
// line read (cli.hpp), the reporters chosen, the session run (session.hpp).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "commands/cli.hpp"
#include "commands/commands.hpp"
#include "commands/list.hpp"
#include "devices/host_info.hpp"
#include "report/report_files.hpp"
#include "report/reporter.hpp"
#include "report/results_stream.hpp"
#include "run/session.hpp"
#include "run/workers/executor.hpp"

namespace {

// While resuming, the log dir holds a run's finished results, so no file is written until the
// session has accepted the resume (sweep_planned comes only once the sweep ids matched): a
// resume refused (another sweep, or an error before the sweep is planned), or interrupted before
// a new test started, leaves every file as it was. results.jsonl is written beside the old one
// and takes its place when the first new test starts (the finished tests are replayed into it
// by then) or at the end, so a resumed run that is killed early still leaves the old stream.
class ResumeGate final : public bb::Reporter {
 public:
  ResumeGate(std::optional<std::filesystem::path> stream, bb::ReportPaths paths) : stream_(std::move(stream)), paths_(std::move(paths)) {}
  ~ResumeGate() override { discard(); }
  void run_started(const bb::RunRecord& run) override { pass([run](Reporter& r) { r.run_started(run); }); }
  void op_planned(const bb::OpReport& op) override { pass([op](Reporter& r) { r.op_planned(op); }); }
  void device_described(const bb::DeviceKind& d) override { pass([d](Reporter& r) { r.device_described(d); }); }
  void sweep_planned(const bb::RunRecord& run, std::size_t total) override {
    open();
    pass([run, total](Reporter& r) { r.sweep_planned(run, total); });
  }
  void impl_skipped(const std::string& impl, const std::string& device, const std::string& reason) override {
    pass([impl, device, reason](Reporter& r) { r.impl_skipped(impl, device, reason); });
  }
  void test_started(const bb::TestResult& t) override {
    started_ = true;
    pass([t](Reporter& r) { r.test_started(t); });
    commit();
  }
  void test_finished(const bb::TestResult& t, std::size_t done, std::size_t total) override {
    pass([t, done, total](Reporter& r) { r.test_finished(t, done, total); });
  }
  void warning(const std::string& text) override { pass([text](Reporter& r) { r.warning(text); }); }
  void run_finished(const bb::RunRecord& run) override {
    if (inner_.empty() || (!started_ && !run.interrupted.empty())) return discard();
    for (auto& r : inner_) r->run_finished(run);
    commit();
  }

 private:
  void pass(const std::function<void(Reporter&)>& event) {  // delivered, or kept until the resume is accepted
    if (inner_.empty()) return pending_.push_back(event);
    for (auto& r : inner_) event(*r);
  }
  void open() {
    if (!inner_.empty()) return;
    if (stream_) {
      temp_ = stream_->string() + fmt::format(".tmp.{}", getpid());
      inner_.push_back(bb::make_results_stream_writer(temp_));
    }
    inner_.push_back(bb::make_report_files_reporter(paths_));
    for (const auto& event : pending_)
      for (auto& r : inner_) event(*r);
    pending_.clear();
  }
  void commit() {  // the new stream replaces the old
    if (temp_.empty()) return;
    std::error_code ec;
    std::filesystem::rename(temp_, *stream_, ec);
    if (ec) fmt::print(stderr, "error: {}: {}\n", stream_->string(), ec.message());
    temp_.clear();
  }
  void discard() {  // the folder stays as it was
    inner_.clear();
    pending_.clear();
    std::error_code ec;
    if (!temp_.empty()) std::filesystem::remove(temp_, ec);
    temp_.clear();
  }

  std::optional<std::filesystem::path> stream_;  // DIR/results.jsonl (none with --no-log)
  bb::ReportPaths paths_;
  std::vector<std::unique_ptr<Reporter>> inner_;  // empty until the resume is accepted
  std::vector<std::function<void(Reporter&)>> pending_;
  std::filesystem::path temp_;  // the new stream, until it replaces the old
  bool started_ = false;        // a new test started
};

std::filesystem::path timestamped_log_dir() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return std::filesystem::path("bb-logs") / buf;
}

}  // namespace

namespace bb {

int run_main(int argc, char** argv) {
  auto cli = parse_cli(argc, argv);
  if (!cli) {
    fmt::print(stderr, "error: {}\n", cli.error().message);
    return 2;
  }
  if (cli->exit_now) return *cli->exit_now;
  if (cli->list_only) {  // what the run would test (check --list prints the same)
    auto plan = bb::plan_session(cli->session);
    if (!plan) return fmt::print(stderr, "error: {}\n", plan.error().message), 2;
    return bb::print_listing(*plan);
  }

  bb::RunRecord run;
  run.command = cli->command_line;
  run.host = bb::describe_host();
  run.root = cli->session.root.string();
  run.options = bb::session_options_json(cli->session);

  std::vector<std::unique_ptr<bb::Reporter>> reporters;
  // `--json -`: stdout holds the JSON alone; the console goes to stderr.
  bb::ConsoleOptions console;
  console.verbose = cli->verbose;
  console.quiet = cli->quiet;
  console.case_table = cli->case_table;
  console.out = cli->json_to_stdout ? stderr : stdout;
  console.terminal = isatty(cli->json_to_stdout ? STDERR_FILENO : STDOUT_FILENO) != 0;
  const char* no_colour = std::getenv("NO_COLOR");  // no-color.org: set and not empty
  console.colour = !(no_colour && *no_colour);
  std::filesystem::path& log_dir = cli->session.log_dir;
  if (!cli->no_log) {
    log_dir = cli->log_dir.empty() ? timestamped_log_dir() : cli->log_dir;
    std::error_code ec;
    std::filesystem::create_directories(log_dir, ec);
    if (ec) {
      fmt::print(stderr, "error: --log-dir {}: {}\n", log_dir.string(), ec.message());
      return 2;
    }
  }
  console.log_dir = log_dir;
  reporters.push_back(bb::make_console_reporter(console));
  // Every report in the log dir; each flag's file as a copy beside it (or alone, with --no-log).
  bb::ReportPaths paths = log_dir.empty() ? bb::ReportPaths{} : bb::log_dir_reports(log_dir);
  for (const auto& copy : cli->report_copies) bb::add_report_copy(paths, *copy.format, copy.file);
  std::optional<std::filesystem::path> stream;
  if (!log_dir.empty()) stream = log_dir / "results.jsonl";
  if (cli->session.resume) {
    reporters.push_back(std::make_unique<ResumeGate>(stream, paths));
  } else {
    if (stream) reporters.push_back(bb::make_results_stream_writer(*stream));
    reporters.push_back(bb::make_report_files_reporter(paths));
  }
  std::vector<bb::Reporter*> raw;
  for (auto& r : reporters) raw.push_back(r.get());
  return bb::run_session(cli->session, std::move(run), raw);
}

}  // namespace bb
