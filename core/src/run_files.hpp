// A run read back from what it left: its results.json, or the results.jsonl of one that was
// killed (report/results_stream.hpp), or the log dir that holds either.
#pragma once

#include <filesystem>

#include "expected.hpp"
#include "run_record.hpp"

namespace bb {

// `path` is a results.json, a results.jsonl, or a log dir holding either (results.json first).
Expected<RunRecord> load_run(const std::filesystem::path& path);
// The file load_run reads for `path`: a log dir's results.json, else its results.jsonl.
std::filesystem::path run_file(const std::filesystem::path& path);

}  // namespace bb
