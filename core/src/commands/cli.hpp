// The command line: backendbench [--suite custom_ops] [--backend custom_ops]
//   [--custom-ops-root DIR] [--ops a,b] [--impls x,y] [--log-dir DIR] ...
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>
#include <optional>
#include <string>

#include "expected.hpp"
#include "report/report_files.hpp"
#include "run/session.hpp"

namespace bb {

struct CliOptions {
  SessionOptions session;
  std::filesystem::path log_dir;  // empty: bb-logs/<timestamp>
  bool no_log = false;
  bool list_only = false;
  bool verbose = false;
  bool quiet = false;
  bool case_table = false;  // --table
  // Report files by flag (nvbench's names: report_formats()), beside the log dir's.
  ReportPaths report_copies;
  bool json_to_stdout = false;  // --json -: stdout holds the JSON alone
  std::string command_line;
  std::optional<int> exit_now;  // --help / --version: exit with this status
};

// argv[0] is used to find the default root (the built custom_ops beside the binary).
Expected<CliOptions> parse_cli(int argc, char** argv);

// --shard i/n (1-based) or auto (Slurm array or Kubernetes Indexed Job variables, read through
// `getenv`): the 0-based index and the count.
Expected<std::pair<int, int>> parse_shard(const std::string& text,
                                          const std::function<const char*(const char*)>& getenv = [](const char* n) { return std::getenv(n); });
// --devices all | 0,1,...: (all, ordinals); "" is (false, {}).
Expected<std::pair<bool, std::vector<int>>> parse_devices(const std::string& text);
// The GPU ids CTest gave this test (CTEST_RESOURCE_GROUP_0_GPUS), as "1,2"; "" outside CTest.
std::string ctest_devices();

// "a,b,c" split at commas outside brackets (a case id's parameters keep theirs); empty items dropped.
std::vector<std::string> split_list(const std::string& text);

// "backendbench 0.1.0 (commit 1e97ddc...)": --version's line, and every subcommand's.
std::string version_line();

// Where the host binary is: /proc/self/exe, else argv[0].
std::filesystem::path self_executable(const char* argv0);

// The root a run uses without --custom-ops-root: custom_ops/ beside the binary (a build tree),
// or <prefix>/share/backendbench/custom_ops (an install).
std::filesystem::path default_root(const std::filesystem::path& exe);

}  // namespace bb
