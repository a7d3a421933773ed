// One run of the suite: discover, plan, test every (op, implementation, case), score, report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "measurement.hpp"
#include "reporter.hpp"

namespace bb {

struct SessionOptions {
  std::filesystem::path root;
  std::vector<std::string> ops;    // --ops
  std::vector<std::string> impls;  // --impls
  bool isolate = true;             // worker processes; --no-isolate runs in the host
  std::string worker_binary;       // the host binary, run as `<binary> __worker`
  double test_timeout = 60.0;      // seconds per test before TIMEOUT (timing budget added)
  bool performance = true;         // time performance cases
  bool check_determinism = false;
  std::optional<uint64_t> seed;
  TimingOptions timing;
  std::vector<double> perf_p{1.0};
};

nlohmann::json session_options_json(const SessionOptions& options);

// Returns the exit status: 0 every test passed (SKIPPED allowed), 1 some test did not pass,
// 2 the root, a manifest or a plugin could not be used.
int run_session(const SessionOptions& options, RunInfo info, const std::vector<Reporter*>& reporters);

}  // namespace bb
