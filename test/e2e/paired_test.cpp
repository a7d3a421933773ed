// Paired speedups, end to end: an implementation timed against itself (its op's baseline is the
// implementation) must read 1.00 within its interval on every case, on the CPU and, where one
// exists, on a CUDA device. What is asserted is the interval, never a time.
#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "paired.hpp"

using e2e::backendbench;

namespace {

// Every timed test of `r`: paired, with an interval holding 1.0. Returns how many there were.
int expect_self_speedup_of_one(const nlohmann::json& r) {
  int timed = 0;
  for (const auto& t : r["tests"]) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    if (!t.contains("timing")) continue;
    ++timed;
    const std::string what = t["impl"].get<std::string>() + " " + t["case"].get<std::string>();
    const bool has = t.contains("speedup") && t.contains("speedup_low") && t.contains("speedup_high") && t.contains("speedup_pairs");
    EXPECT_TRUE(has) << t.dump();
    if (!has) continue;
    EXPECT_EQ(t["timing"]["stop"], "paired") << what;
    EXPECT_EQ(t["speedup_pairs"].get<double>(), static_cast<double>(bb::kPairedBlocks)) << what;
    EXPECT_GE(t["speedup_confidence"].get<double>(), bb::kSpeedupConfidence) << what;
    EXPECT_GT(t["baseline_median_s"].get<double>(), 0.0) << what;
    EXPECT_GT(t["timing"]["baseline_measured_time_s"].get<double>(), 0.0) << what;
    const double lo = t["speedup_low"], s = t["speedup"], hi = t["speedup_high"];
    EXPECT_LE(lo, s) << what;
    EXPECT_LE(s, hi) << what;
    // "Reads 1.00": the interval holds 1.00 as the reports print it (two decimals): a low end
    // of 1.0005 (seen once on a 16-core CPU host) prints as 1.00; one of 1.005 would not.
    EXPECT_LT(lo, 1.005) << what << ": against itself, the interval [" << lo << ", " << hi << "] must hold 1.00";
    EXPECT_GE(hi, 0.995) << what << ": against itself, the interval [" << lo << ", " << hi << "] must hold 1.00";
  }
  return timed;
}

}  // namespace

TEST(Paired, AnImplementationAgainstItselfReadsOneOnEveryCpuCase) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("paired"), "--impls", "scale_good", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(expect_self_speedup_of_one(r), 3);
  // The console says so: an implementation whose interval holds 1.0 is not significantly faster.
  EXPECT_NE(run.out.find("n.s."), std::string::npos) << run.out;
}

TEST(Paired, AnImplementationAgainstItselfReadsOneOnEveryCudaCase) {
  const auto logs = e2e::temp_dir("logs");
  // Each is its op's CUDA baseline (custom_ops/*/gen_input.yaml).
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--impls", "myop_cuda_naive,rmsnorm_cuda_block", "--log-dir",
                           logs.string()});
  const auto r = e2e::read_json(logs / "results.json");
  if (r["tests"].empty()) GTEST_SKIP() << "built without CUDA: no CUDA implementations";
  for (const auto& d : r.value("devices", nlohmann::json::array()))
    if (d.value("name", "") == "cuda" && !d.value("available", false)) GTEST_SKIP() << "no CUDA device: " << d.value("reason", "");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(expect_self_speedup_of_one(r), 4 + 3);
}
