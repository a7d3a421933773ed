// Running shell commands and reading a run's tests, for the e2e tests of the scripts around the
// binary (Slurm, CTest, nightly).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "run_files.hpp"
#include "run_record.hpp"

namespace e2e {

struct ShellRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `text` quoted for sh.
inline std::string sh_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `command` with sh; killed after `timeout_s` (exit 124).
inline ShellRun shell(const std::string& command, int timeout_s = 240) {
  ShellRun run;
  const std::string full = "timeout -k 5 " + std::to_string(timeout_s) + " sh -c " + sh_quote(command) + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return run;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tests of a run (results.json or a log dir): test key -> verdict name. An unreadable run
// is a test failure and an empty map.
inline std::map<std::string, std::string> verdicts_of(const std::filesystem::path& run) {
  std::map<std::string, std::string> out;
  auto record = bb::load_run(run);
  if (!record) {
    ADD_FAILURE() << "cannot load " << run << ": " << record.error().message;
    return out;
  }
  for (const auto& t : record->tests) out[bb::test_key(t)] = bb::verdict_name(t.outcome.verdict);
  return out;
}

}  // namespace e2e
