// backendbench: discover the ops of a custom-ops root, check every implementation against its
// reference, time it, score it, and write the results. `compare`, `merge` and `resource-spec`
// are subcommands (commands.hpp).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "cli.hpp"
#include "commands.hpp"
#include "executor.hpp"
#include "host_info.hpp"
#include "list.hpp"
#include "report_files.hpp"
#include "reporter.hpp"
#include "session.hpp"

namespace {

std::filesystem::path timestamped_log_dir() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return std::filesystem::path("bb-logs") / buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "__worker") == 0) return bb::worker_main(argc >= 3 ? std::atol(argv[2]) : 0);
  if (argc >= 2 && std::strcmp(argv[1], "compare") == 0) return bb::compare_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "merge") == 0) return bb::merge_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "check") == 0)
    return bb::check_main(argc - 1, argv + 1, bb::self_executable(argv[0]).c_str());
  if (argc >= 2 && std::strcmp(argv[1], "new-op") == 0) return bb::new_op_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "resource-spec") == 0)
    return bb::resource_spec_main(argc - 1, argv + 1, bb::self_executable(argv[0]).c_str());

  auto cli = bb::parse_cli(argc, argv);
  if (!cli) {
    fmt::print(stderr, "error: {}\n", cli.error().message);
    return 2;
  }
  if (cli->exit_now) return *cli->exit_now;
  if (cli->list_only) return bb::list_root(cli->session);

  bb::RunInfo info;
  info.command = cli->command_line;
  info.host = bb::describe_host();
  info.root = cli->session.root;
  info.options = bb::session_options_json(cli->session);

  std::vector<std::unique_ptr<bb::Reporter>> reporters;
  reporters.push_back(bb::make_console_reporter({cli->verbose, cli->quiet, isatty(STDOUT_FILENO) != 0}));
  if (!cli->no_log) {
    info.log_dir = cli->log_dir.empty() ? timestamped_log_dir() : cli->log_dir;
    std::error_code ec;
    std::filesystem::create_directories(info.log_dir, ec);
    if (ec) {
      fmt::print(stderr, "error: --log-dir {}: {}\n", info.log_dir.string(), ec.message());
      return 2;
    }
    reporters.push_back(bb::make_jsonl_reporter(info.log_dir / "results.jsonl"));
  }
  // Every report in the log dir; each flag's file as well (or alone, with --no-log).
  bb::ReportPaths paths = info.log_dir.empty() ? bb::ReportPaths{} : bb::log_dir_reports(info.log_dir);
  if (cli->json_file) paths.json = *cli->json_file;
  if (cli->junit_file) paths.junit = *cli->junit_file;
  if (cli->csv_file) paths.csv = *cli->csv_file;
  if (cli->md_file) paths.markdown = *cli->md_file;
  if (cli->html_file) paths.html = *cli->html_file;
  reporters.push_back(bb::make_report_files_reporter(paths));
  std::vector<bb::Reporter*> raw;
  for (auto& r : reporters) raw.push_back(r.get());
  return bb::run_session(cli->session, info, raw);
}
