// Reporters receive a run's events; each writes one form of the results. The session knows
// nothing about formats; a new format is a new Reporter. The run itself is one RunRecord
// (run_record.hpp), built by the session as the run goes: each event that concerns the whole
// run gives the record as it stands then.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devices/device_kind.hpp"
#include "results.hpp"
#include "run_record.hpp"

namespace bb {

class Reporter {
 public:
  virtual ~Reporter() = default;
  // The record has the command, host, options and root, and its start time.
  virtual void run_started(const RunRecord&) {}
  virtual void op_planned(const OpReport&) {}
  // A device kind the run asked about, as its probe described it (device_kind.hpp).
  virtual void device_described(const DeviceKind&) {}
  // The sweep is planned: `total` tests will run (this shard's, every repeat); the record now
  // has the provenance, the sweep id, the shard and the repeats.
  virtual void sweep_planned(const RunRecord& /*run*/, std::size_t /*total*/) {}
  // An implementation that cannot run at all here (its device is missing): its tests will all
  // be SKIPPED for `reason`. Reported once, before its tests.
  virtual void impl_skipped(const std::string& /*impl*/, const std::string& /*device*/, const std::string& /*reason*/) {}
  // A worker took a test (several run at once with several workers).
  virtual void test_started(const TestResult& /*what: op, impl, case_id, device*/) {}
  virtual void test_finished(const TestResult&, std::size_t /*done*/, std::size_t /*total*/) {}
  // Something the user should know that belongs to no test (a baseline that could not be timed).
  virtual void warning(const std::string& /*text*/) {}
  // The whole run: every test in sweep order, the scores, the exit code, where the time went.
  virtual void run_finished(const RunRecord&) {}
};

struct ConsoleOptions {
  bool verbose = false;   // -v: a line for every test, not only the ones that did not pass
  bool quiet = false;     // -q: only the final table
  bool case_table = false;  // --table: the per-case table (case_table.hpp) before the final table
  bool terminal = false;  // stdout is a terminal: one live status line, colours
  bool colour = true;     // verdicts coloured on a terminal (false: NO_COLOR is set)
  double progress_interval = 5.0;  // not a terminal: a plain progress line this often (seconds)
  std::FILE* out = stdout;  // where the lines go (tests: a memory stream)
  std::FILE* err = stderr;  // warnings and errors
  std::function<double()> clock;  // seconds, monotonic (tests: a fake); empty: std::chrono::steady_clock
  int width = 0;  // terminal: columns for the status line; 0: asked of the terminal
  std::filesystem::path log_dir;  // said at the start; empty: none (--no-log)
};

std::unique_ptr<Reporter> make_console_reporter(ConsoleOptions options);

}  // namespace bb
