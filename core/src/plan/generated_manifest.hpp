// A BackendBench-py op folder (gen_input.py, no gen_input.yaml) made into a manifest. A worker
// embedding Python runs gen_input.py's get_correctness_tests() and get_performance_tests() once
// (their inputs come from Python callables), writes each test's tensors and a manifest into the
// cache folder, keyed by the content of gen_input.py and of the folder's Python files and by the
// seed; the run then goes on from that manifest as from any gen_input.yaml. docs/PYTHON.md says
// what maps to what.
#pragma once

#include <filesystem>
#include <optional>

#include "expected.hpp"
#include "plan/discovery.hpp"
#include "run/workers/executor.hpp"

namespace bb {

// Whether an op's manifest is a BackendBench-py gen_input.py (discovery.hpp).
bool is_generator(const std::filesystem::path& manifest);

// The manifest made from `folder`'s gen_input.py (made now in a worker of `executor`, or found
// in the cache); an error names gen_input.py and what went wrong (its traceback).
Expected<std::filesystem::path> generated_manifest(const OpFolder& folder, Executor& executor, std::optional<uint64_t> seed, double timeout);

// Where generated manifests are kept (under the cache folder, device_peak.hpp).
std::filesystem::path generated_root();

}  // namespace bb
