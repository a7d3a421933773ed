// A custom-ops root of a test's own, for the fake worker (fake_executor.hpp): op folders with a
// gen_input.yaml and "libraries" that are files of text (no worker loads them: the fake answers
// their probes). Each instance is a fresh folder, removed at its end: the run's caches of cases
// and buffers go by path (blob_cache.hpp), so a test run again (--gtest_repeat) must not meet
// the previous run's paths.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// y = 2 * x, float32: two correctness cases and one performance case.
inline const char* kTwiceManifest = R"(op: OP
seed: 11
inputs:
  - {name: x, dtype: float32, init: randn}
outputs:
  - {name: y, shape: x, dtype: x}
bytes: 2 * numel(x) * sizeof(x)
tests:
  correctness:
    - name: small
      params: {n: [16, 100]}
      inputs: {x: {shape: [n]}}
  performance:
    - name: big
      inputs: {x: {shape: [256]}}
)";

class TempOpsRoot {
 public:
  TempOpsRoot() {
    static std::atomic<int> count{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
    dir = std::filesystem::temp_directory_path() / "bb_unit_fake" /
          (name + "-" + std::to_string(getpid()) + "-" + std::to_string(count++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempOpsRoot() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TempOpsRoot(const TempOpsRoot&) = delete;
  TempOpsRoot& operator=(const TempOpsRoot&) = delete;

  // <root>/<op>/gen_input.yaml (the manifest's "OP" replaced by the op's name) and a file per
  // library, each holding its own name (distinct bytes: no two are copies of one another).
  std::filesystem::path add_op(const std::string& op, const std::vector<std::string>& libraries, std::string yaml = kTwiceManifest) {
    const auto folder = dir / op;
    std::filesystem::create_directories(folder);
    for (auto at = yaml.find("OP"); at != std::string::npos; at = yaml.find("OP", at + op.size())) yaml.replace(at, 2, op);
    std::ofstream(folder / "gen_input.yaml") << yaml;
    for (const auto& lib : libraries) std::ofstream(folder / lib) << "not a library: " << lib << "\n";
    return folder;
  }

  std::filesystem::path dir;
};
