// The shipped ops, and a plugin dropped into a built root with nothing rebuilt.
#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "run_record.hpp"

using e2e::backendbench;

namespace {

bool available(const nlohmann::json& results, const std::string& kind) {
  for (const auto& d : results.value("devices", nlohmann::json::array()))
    if (d.value("name", "") == kind) return d.value("available", false);
  return false;
}

}  // namespace

// On a machine without a GPU the CUDA and HIP implementations are SKIPPED with the reason and
// the run still exits 0; where the device exists they pass and are timed like the CPU ones.
TEST(ShippedOps, EveryImplementationPassesAndIsTimed) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--suite", "custom_ops", "--backend", "custom_ops", "--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop,rmsnorm",
                           "--log-dir", logs.string(), "--timeout", "0.2", "--min-time", "0.01"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["schema_version"], bb::kResultsSchemaVersion);
  EXPECT_TRUE(r["host"].contains("hostname"));
  EXPECT_EQ(r["ops"].size(), 2u);
  EXPECT_EQ(r["ops"][0]["seed"], 1234);
  const bool cuda = available(r, "cuda"), hip = available(r, "hip");
  int timed = 0, cuda_tests = 0, backward = 0;
  for (const auto& t : r["tests"]) {
    const std::string impl = t["impl"];
    // The Python implementations (PyTorch, Triton JIT) declare CUDA (their BACKENDBENCH_INFO).
    const bool python = impl.ends_with("_torch") || impl.ends_with("_triton_jit") || impl.ends_with("_triton");
    const std::string device = impl.find("_cuda_") != std::string::npos || python ? "cuda" : impl.find("_hip_") != std::string::npos ? "hip" : "cpu";
    cuda_tests += impl.find("_cuda_") != std::string::npos;
    if (device != "cpu" && !available(r, device)) {
      EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();
      EXPECT_NE(t["message"].get<std::string>().find("no " + device + " device"), std::string::npos) << t.dump();
      continue;
    }
    // rmsnorm's backward (its manifest's backward:): the warp-per-row kernels have none.
    if (t["mode"] == "bwd" && impl.ends_with("_warp")) {
      EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();
      EXPECT_NE(t["message"].get<std::string>().find("exports no rmsnorm_backward_impl"), std::string::npos) << t.dump();
      continue;
    }
    if (t["mode"] == "bwd") ++backward;
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    EXPECT_EQ(t["device"], device) << t.dump();
    if (t["kind"] == "performance") {
      timed += !python;  // the Python ones (CUDA only) are counted by the GPU's own tests
      EXPECT_GT(t["timing"]["median_s"].get<double>(), 0.0);
      EXPECT_GT(t["gbps"].get<double>(), 0.0);
      if (device == "cpu") EXPECT_GT(t["speedup"].get<double>(), 0.0);  // the CPU reference is a CPU baseline only
    }
  }
  // rmsnorm's cases run forward and backward (bwd: the same cases' backward calls).
  if (std::filesystem::exists(std::filesystem::path(BB_SHIPPED_ROOT) / "myop" / "myop_cuda_vec.so")) EXPECT_EQ(cuda_tests, 2 * 31 + 2 * 36 * 2);
  // CPU: myop 2 implementations x 4 performance cases, rmsnorm 1 x 3 forward and 1 x 3 backward;
  // each GPU kind adds 2 x 6 + 2 x 5 forward and 1 x 5 backward (block per row only) (the cases
  // sized for a GPU, `devices: [cuda, hip]`, are not CPU tests).
  EXPECT_EQ(timed, 2 * 4 + 1 * 3 + 1 * 3 + (cuda ? 22 + 5 : 0) + (hip ? 22 + 5 : 0));
  EXPECT_GT(backward, 0);
  EXPECT_EQ(r["scores"]["correctness_rate"], 1.0);
  EXPECT_FALSE(r["scores"]["geomean_speedup"].is_null());
  EXPECT_NE(run.out.find("myop__myop_vec"), std::string::npos);
}

TEST(ShippedOps, ADroppedInLibraryIsScoredWithNothingRebuilt) {
  const auto root = e2e::temp_dir("root");
  std::filesystem::copy(BB_SHIPPED_ROOT, root, std::filesystem::copy_options::recursive);
  auto before = backendbench({"--custom-ops-root", root.string(), "--ops", "myop", "--list"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out.find("myop__myop_dropin"), std::string::npos);

  std::filesystem::copy_file(BB_DROPIN_LIBRARY, root / "myop" / "myop_dropin.so");
  const auto logs = e2e::temp_dir("logs");
  auto after = backendbench({"--custom-ops-root", root.string(), "--ops", "myop", "--log-dir", logs.string(), "--correctness-only"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  auto r = e2e::read_json(logs / "results.json");
  auto dropin = e2e::tests_of(r, "myop__myop_dropin");
  EXPECT_EQ(dropin.size(), 29u);  // every case of myop: performance cases are checked, not timed
  for (const auto& t : dropin) EXPECT_FALSE(t.contains("timing"));
  for (const auto& t : dropin) EXPECT_EQ(t["verdict"], "PASS");
}

TEST(ShippedOps, APluginWrittenInCFromTheDocs) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("c_plugin"), "--log-dir", logs.string(), "--correctness-only"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;  // float32 only: BB_ERR_UNSUPPORTED on other dtypes is SKIPPED
  auto r = e2e::read_json(logs / "results.json");
  int pass = 0, skipped = 0;
  for (const auto& t : e2e::tests_of(r, "myop__myop_c")) {
    const bool f32 = t["case"].get<std::string>().find("float16") == std::string::npos &&
                     t["case"].get<std::string>().find("float64") == std::string::npos &&
                     t["case"].get<std::string>().find("bfloat16") == std::string::npos;
    EXPECT_EQ(t["verdict"], f32 ? "PASS" : "SKIPPED") << t.dump();
    if (!f32) EXPECT_EQ(t["message"], "unsupported by the implementation: only float32") << t.dump();
    (f32 ? pass : skipped) += 1;
  }
  EXPECT_EQ(pass, 5 + 4 + 1 + 2);  // vector/float32, matrix, negative_alpha, large/float32
  EXPECT_EQ(skipped, 15 + 2);
}
