// The command line: backendbench [--suite custom_ops] [--backend custom_ops]
//   [--custom-ops-root DIR] [--ops a,b] [--impls x,y] [--log-dir DIR] ...
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "expected.hpp"
#include "session.hpp"

namespace bb {

struct CliOptions {
  SessionOptions session;
  std::filesystem::path log_dir;  // empty: bb-logs/<timestamp>
  bool no_log = false;
  bool list_only = false;
  bool verbose = false;
  std::string command_line;
  std::optional<int> exit_now;  // --help / --version: exit with this status
};

// argv[0] is used to find the default root (the built custom_ops beside the binary).
Expected<CliOptions> parse_cli(int argc, char** argv);

// Where the host binary is: /proc/self/exe, else argv[0].
std::filesystem::path self_executable(const char* argv0);

}  // namespace bb
