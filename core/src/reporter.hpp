// Reporters receive a run's events; each writes one form of the results. The session knows
// nothing about formats; a new format is a new Reporter.
#pragma once

#include <cstddef>
#include <filesystem>
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
  double wall_time = 0;
  double measured_time = 0;  // seconds inside timed regions, every measurement (baselines too)
  std::string finished_at;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void run_started(const RunInfo&) {}
  virtual void op_planned(const OpReport&) {}
  // A device kind the run asked about: {name, available, reason | runtime, devices: [...]}.
  virtual void device_described(const nlohmann::json&) {}
  virtual void test_finished(const TestResult&, std::size_t /*done*/, std::size_t /*total*/) {}
  virtual void run_finished(const RunSummary&) {}
};

struct ConsoleOptions {
  bool verbose = false;  // a line for every test, not only the ones that did not pass
  bool color = false;
};

std::unique_ptr<Reporter> make_console_reporter(ConsoleOptions options);
// results.jsonl: one line per test, flushed as each ends, so a killed run keeps what finished.
std::unique_ptr<Reporter> make_jsonl_reporter(const std::filesystem::path& file);
// results.json: the whole run, written at the end.
std::unique_ptr<Reporter> make_json_reporter(const std::filesystem::path& file);

nlohmann::json scores_to_json(const Scores& s);

// "12.3 us", "4.56 ms"
std::string format_seconds(double s);

}  // namespace bb
