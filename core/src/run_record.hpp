// A whole run as data: the session builds it as the run goes and hands it to the reporters;
// results.json holds it, and merge, compare and every report file are computed from it. A run
// that was killed has no results.json; its results.jsonl is read instead (run_files.hpp's
// load_run, results_stream.hpp), so nothing finished is lost.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "expected.hpp"
#include "results.hpp"
#include "scores.hpp"

namespace bb {

// Version 2 added provenance, the sweep id, shards, repeats and device ordinals.
inline constexpr int kResultsSchemaVersion = 2;

// What the report says about one op besides its tests.
struct OpReport {
  std::string op;
  std::string manifest;
  uint64_t seed = 0;
  std::string reference;       // which reference served
  std::string reference_kind;  // library | implementation | identity
  std::string baseline;        // "" if none
  std::vector<std::string> impls;
  std::size_t cases = 0;
  std::vector<std::string> warnings;
  std::vector<std::string> errors;  // manifest error, libraries that could not be used
};

struct ShardInfo {
  int index = 0;  // 0-based
  int count = 1;  // 1: not sharded
};

struct RunRecord {
  int schema_version = kResultsSchemaVersion;
  std::string command;                  // the command line, as typed
  std::string started_at, finished_at;  // ISO 8601, UTC
  nlohmann::json host;                  // hostname, os, cpu, cores, memory, tool version
  nlohmann::json options;               // the effective options
  nlohmann::json provenance;            // tool version and commit, plugins' and manifests' hashes
  std::string root;
  // The sweep: the same root, selection, options and seed give the same id on every host, so
  // shards of one sweep can be told from shards of another.
  std::string sweep_id;
  ShardInfo shard;
  std::vector<ShardInfo> merged_shards;  // a merged run: the shards it joins (empty otherwise)
  int repeats = 1;
  std::vector<OpReport> ops;
  nlohmann::json devices = nlohmann::json::array();  // device kinds as described
  std::vector<TestResult> tests;
  Scores scores;
  std::vector<double> perf_p{1.0};
  ScoreRule score_rule = ScoreRule::standard;
  int exit_code = 0;
  double wall_time = 0;
  double measured_time = 0;  // seconds inside timed regions, every measurement (baselines too)
  // Where the wall time went: {plan_s, devices_s, run_s} and the tests' phases summed ("tests");
  // each worker's {name, jobs, tests, worker_starts, started_ahead, busy_s}.
  nlohmann::json phases = nlohmann::json::object();
  nlohmann::json workers = nlohmann::json::array();
  nlohmann::json host_load = nlohmann::json::object();  // what else the host did (host_load.hpp)
  bool complete = true;  // false: read back from a results.jsonl whose run did not finish, or interrupted
  std::string interrupted;  // the signal that stopped the run early ("SIGINT"), or ""
};

nlohmann::json to_json(const RunRecord& r);
// Errors name what is wrong ("results.json: schema_version 1, expected 2").
Expected<RunRecord> run_from_json(const nlohmann::json& j, const std::string& where);

// The identity of a test within a sweep: "op/impl/case", with "#<repeat>" past the first.
std::string test_key(const TestResult& r);

// The implementations of a run's ops, in order, as compute_scores wants them.
std::vector<std::pair<std::string, std::string>> impl_order(const RunRecord& r);

// Scores and exit status recomputed from the tests (after a merge, say).
void rescore(RunRecord& r);

nlohmann::json op_report_json(const OpReport& op);
OpReport op_report_from_json(const nlohmann::json& j);
nlohmann::json scores_to_json(const Scores& s);

}  // namespace bb
