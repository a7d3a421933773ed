// Reporters receive a run's events; each writes one form of the results. The session knows
// nothing about formats; a new format is a new Reporter.
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

#include "results.hpp"
#include "scores.hpp"

namespace bb {

struct RunInfo {
  std::string command;         // the command line, as typed
  std::string started_at;      // ISO 8601, UTC
  nlohmann::json host;         // hostname, os, cpu, cores, memory
  nlohmann::json options;      // the effective options
  std::filesystem::path root;  // the custom-ops root
  std::filesystem::path log_dir;
  // Known once the sweep is planned (sweep_planned): tool version and commit, each plugin's
  // and manifest's sha256 and size.
  nlohmann::json provenance = nlohmann::json::object();
  std::string sweep_id;        // the same sweep on every host and shard
  int shard_index = 0, shard_count = 1;
  int repeats = 1;
  std::vector<double> perf_p{1.0};
};

// What the report says about one op besides its tests.
struct OpReport {
  std::string op;
  std::string manifest;
  uint64_t seed = 0;
  std::string reference;  // which reference served
  std::string reference_kind;  // library | implementation | identity
  std::string baseline;   // "" if none
  std::vector<std::string> impls;
  std::size_t cases = 0;
  std::vector<std::string> warnings;
  std::vector<std::string> errors;  // manifest error, libraries that could not be used
};

struct RunSummary {
  std::vector<OpReport> ops;
  std::vector<TestResult> results;
  Scores scores;
  int exit_code = 0;
  std::string interrupted;  // "SIGINT" / "SIGTERM" when a signal stopped the run early
  double wall_time = 0;
  double measured_time = 0;  // seconds inside timed regions, every measurement (baselines too)
  std::string finished_at;
  // Where the wall time went: {plan_s, devices_s, run_s, report_s} and each worker's
  // {name, jobs, worker_starts, started_ahead, busy_s}.
  nlohmann::json phases = nlohmann::json::object();
  nlohmann::json workers = nlohmann::json::array();
  // What else the host did while the tests ran (host_load.hpp); {} where not measured.
  nlohmann::json host_load = nlohmann::json::object();
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void run_started(const RunInfo&) {}
  virtual void op_planned(const OpReport&) {}
  // A device kind the run asked about: {name, available, reason | runtime, devices: [...]}.
  virtual void device_described(const nlohmann::json&) {}
  // The sweep is planned: `total` tests will run (this shard's, every repeat); `info` now has
  // the provenance and the sweep id.
  virtual void sweep_planned(const RunInfo& /*info*/, std::size_t /*total*/) {}
  // An implementation that cannot run at all here (its device is missing): its tests will all
  // be SKIPPED for `reason`. Reported once, before its tests.
  virtual void impl_skipped(const std::string& /*impl*/, const std::string& /*device*/, const std::string& /*reason*/) {}
  // A worker took a test (several run at once with several workers).
  virtual void test_started(const TestResult& /*what: op, impl, case_id, device*/) {}
  virtual void test_finished(const TestResult&, std::size_t /*done*/, std::size_t /*total*/) {}
  // Something the user should know that belongs to no test (a baseline that could not be timed).
  virtual void warning(const std::string& /*text*/) {}
  virtual void run_finished(const RunSummary&) {}
};

struct ConsoleOptions {
  bool verbose = false;   // -v: a line for every test, not only the ones that did not pass
  bool quiet = false;     // -q: only the final table
  bool terminal = false;  // stdout is a terminal: one live status line, colours
  bool colour = true;     // verdicts coloured on a terminal (false: NO_COLOR is set)
  double progress_interval = 5.0;  // not a terminal: a plain progress line this often (seconds)
  std::FILE* out = stdout;  // where the lines go (tests: a memory stream)
  std::FILE* err = stderr;  // warnings and errors
  std::function<double()> clock;  // seconds, monotonic (tests: a fake); empty: std::chrono::steady_clock
  int width = 0;  // terminal: columns for the status line; 0: asked of the terminal
};

std::unique_ptr<Reporter> make_console_reporter(ConsoleOptions options);
// results.jsonl: one line per test, flushed as each ends, so a killed run keeps what finished.
std::unique_ptr<Reporter> make_jsonl_reporter(const std::filesystem::path& file);

// "12.3 us", "4.56 ms"
std::string format_seconds(double s);

}  // namespace bb
