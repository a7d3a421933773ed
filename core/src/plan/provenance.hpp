// Where a run's results came from, so a regression can be traced to what changed: the tool's
// version and commit, every plugin library's and manifest's size and sha256, the runtime
// plugins; and the sweep's identity, shared by its shards on every host.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "expected.hpp"
#include "plan/jobs.hpp"
#include "plan/plan.hpp"

namespace bb {

// {tool: {version, commit, dirty}, manifests: [{op, path, size, sha256}], plugins: [...],
//  runtime_plugins: [...]}; paths relative to the root.
nlohmann::json describe_provenance(const std::filesystem::path& root, const std::vector<OpPlan>& plans,
                                   const std::vector<std::filesystem::path>& runtime_plugins);

// A 16-hex-digit id of the sweep: its tests (every one, before sharding), the manifests' hashes,
// the options that change verdicts or timings, and `run_id` (a scheduler's job id: shards of
// one array share it, and last night's shards differ from tonight's).
std::string sweep_identity(const std::vector<OpPlan>& plans, const std::vector<TestSpec>& tests, const nlohmann::json& options,
                           const nlohmann::json& provenance, const std::string& run_id);

}  // namespace bb
