// results.jsonl, the results stream: its writer (a Reporter: one JSON line per event, flushed as
// each happens, so a killed run keeps every test that finished) and its reader (the run back as
// a RunRecord, a torn last line forgiven). Reader and writer of the format live together.
//
//   {"event": "run_started", "tool", "schema_version", "command", "started_at", "host", "options", "root"}
//   {"event": "op", ...OpReport}            one per op, as planned
//   {"event": "device", ...description}     one per device kind asked about
//   {"event": "sweep", "provenance", "sweep_id", "shard", "repeats", "perf_p", "planned_tests"}
//   {"event": "test", ...TestResult}        one per test, as it finishes
//   {"event": "run_finished", "exit_code", "complete", "interrupted", "finished_at", "wall_time_s",
//    "measured_time_s", "phases", "workers", "host_load", "scores"}
#pragma once

#include <filesystem>
#include <memory>

#include "expected.hpp"
#include "report/reporter.hpp"
#include "run_record.hpp"

namespace bb {

std::unique_ptr<Reporter> make_results_stream_writer(const std::filesystem::path& file);

// The run a stream holds; `complete` false where its run_finished line is missing (a run that
// was killed). Errors name the file and line.
Expected<RunRecord> read_results_stream(const std::filesystem::path& file);

}  // namespace bb
