// Paired speedups, end to end: an implementation timed against itself (its op's baseline is the
// implementation) must read 1.00 within its interval on every case, on the CPU and, where one
// exists, on a CUDA device. What is asserted is the interval, never a time.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "measure/paired.hpp"

using e2e::backendbench;

namespace {

// Every timed test of `r`: paired, with an interval. Counts them into `timed`; returns those whose
// interval does not hold 1.00 as the reports print it (two decimals: a low end of 1.0005, seen
// once on a 16-core CPU host, prints as 1.00; one of 1.005 would not), as "impl case" -> interval.
std::map<std::string, std::string> self_pairing_misses(const nlohmann::json& r, int& timed, bool pinned = false) {
  std::map<std::string, std::string> misses;
  timed = 0;
  for (const auto& t : r["tests"]) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    if (!t.contains("timing")) continue;
    ++timed;
    const std::string what = t["impl"].get<std::string>() + " " + t["case"].get<std::string>();
    const bool has = t.contains("speedup") && t.contains("speedup_low") && t.contains("speedup_high") && t.contains("speedup_pairs");
    EXPECT_TRUE(has) << t.dump();
    if (!has) continue;
    // Pairing stops on the interval, the budget or the most pairs, never before the fewest.
    const std::string stop = t["timing"]["stop"];
    EXPECT_TRUE(stop == "converged" || stop == "timeout" || stop == "max_samples") << what << ": " << stop;
    EXPECT_GE(t["speedup_pairs"].get<double>(), static_cast<double>(bb::kMinPairs)) << what;
    EXPECT_LE(t["speedup_pairs"].get<double>(), static_cast<double>(bb::kMaxPairs)) << what;
    EXPECT_GE(t["speedup_confidence"].get<double>(), bb::kSpeedupConfidence) << what;
    EXPECT_GT(t["baseline_median_s"].get<double>(), 0.0) << what;
    EXPECT_GT(t["timing"]["baseline_measured_time_s"].get<double>(), 0.0) << what;
#if defined(__linux__)
    // Both sides of a CPU pairing ran on one CPU (cpu_pin.hpp): each is a single thread.
    if (pinned) EXPECT_GE(t["timing"].value("pinned_cpu", -1), 0) << what << ": " << t["timing"].dump();
#endif
    const double lo = t["speedup_low"], s = t["speedup"], hi = t["speedup_high"];
    EXPECT_LE(lo, s) << what;
    EXPECT_LE(s, hi) << what;
    if (!(lo < 1.005 && hi >= 0.995)) misses[what] = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  return misses;
}

// Runs `args` and expects every timed case to read 1.00 within its interval. The interval is a
// 99% one (a sign-test interval over 8 to 64 paired blocks), so an honest run misses it on about one
// case in a hundred, more where the host's noise drifts: a missed case is measured once more, in
// a second run, and must hold 1.00 there. A real bias (one side favoured) misses both times.
// With `cuda`, the test is skipped (with the run's reason) where no CUDA device serves it.
void expect_self_speedup_of_one(std::vector<std::string> args, int expected_timed, bool cuda = false) {
  const bool pinned = !cuda;
  const auto logs = e2e::temp_dir("logs");
  args.insert(args.end(), {"--log-dir", logs.string()});
  auto run = backendbench(args);
  const auto r = e2e::read_json(logs / "results.json");
  if (cuda) {
    if (r["tests"].empty()) GTEST_SKIP() << "built without CUDA: no CUDA implementations";
    for (const auto& d : r.value("devices", nlohmann::json::array()))
      if (d.value("name", "") == "cuda" && !d.value("available", false)) GTEST_SKIP() << "no CUDA device: " << d.value("reason", "");
  }
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  int timed = 0;
  const auto misses = self_pairing_misses(r, timed, pinned);
  EXPECT_EQ(timed, expected_timed);
  // The console says so: an implementation whose interval holds 1.0 is not significantly faster.
  if (misses.empty()) EXPECT_NE(run.out.find("n.s."), std::string::npos) << run.out;
  if (misses.empty()) return;
  const auto again_logs = e2e::temp_dir("logs");
  args.back() = again_logs.string();
  auto again = backendbench(args);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  int timed_again = 0;
  const auto still = self_pairing_misses(e2e::read_json(again_logs / "results.json"), timed_again, pinned);
  for (const auto& [what, interval] : misses) {
    std::cout << "[ NOTE     ] " << what << ": against itself, the interval " << interval << " missed 1.00; measured again\n";
    const auto s = still.find(what);
    EXPECT_TRUE(s == still.end()) << what << ": against itself, the interval " << interval << " and, measured again, "
                                  << s->second << " must hold 1.00";
  }
}

}  // namespace

TEST(Paired, AnImplementationAgainstItselfReadsOneOnEveryCpuCase) {
  expect_self_speedup_of_one({"--custom-ops-root", e2e::fixture_root("paired"), "--impls", "scale_good"}, 3);
}

TEST(Paired, AnImplementationAgainstItselfReadsOneOnEveryCudaCase) {
  // Each is its op's CUDA baseline (custom_ops/*/gen_input.yaml): myop's 4 large and 2 GPU-sized
  // cases, rmsnorm's 3 llm and 2 GPU-sized ones.
  expect_self_speedup_of_one({"--custom-ops-root", BB_SHIPPED_ROOT, "--impls", "myop_cuda_naive,rmsnorm_cuda_block"}, 6 + 5, true);
}

#if defined(__linux__)
namespace {
// The timed tests of a short run of `impl` against scale_good (the paired root's baseline), all
// PASS. (An unpinned pairing's 4096-float case, 5-15 us calls against some 90 us of eviction and
// fresh inputs around each sample, read IMPLAUSIBLE by the host's clock in about one run in
// eight on the 2-core VM until each sample was audited on its own: clock_audit.hpp, audit_paced.)
// `unpinned`: an implementation that leaves its CPU, whose timed cases may meet the known false
// reading of an unpinned pairing (docs/RELIABILITY.md, "Limits": the host's clock sees its
// wake-ups across CPUs, some 30 us a sample on the busy VM; scale_wander read IMPLAUSIBLE once
// in a whole CI run of 2026-12-07). Such a case is accepted with the paced audit's message only,
// and one timed case at least must PASS.
std::vector<nlohmann::json> timed_against_good(const std::string& impl, bool unpinned = false) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("paired"), "--impls", impl, "--timeout", "0.3", "--log-dir", logs.string()});
  std::vector<nlohmann::json> timed;
  std::size_t implausible = 0;
  const auto r = e2e::read_json(logs / "results.json");
  for (const auto& t : r["tests"]) {
    if (unpinned && t["verdict"] == "IMPLAUSIBLE" && t.value("kind", "") == "performance") {
      ++implausible;
      EXPECT_NE(t.value("message", "").find("from its inputs' go to its end"), std::string::npos) << t.dump();
      continue;
    }
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    if (t.contains("timing")) timed.push_back(t);
  }
  EXPECT_EQ(run.exit_code, implausible ? 1 : 0) << run.out << run.err;
  EXPECT_EQ(timed.size() + implausible, 3u);
  EXPECT_GE(timed.size(), 1u) << "every timed case read IMPLAUSIBLE: " << run.out << run.err;
  return timed;
}
}  // namespace

TEST(Paired, EveryCpuBlockPlacesItsBuffersAfresh) {
  // Where a process's buffers lie is each block's draw, not the pairing's (request_server.cpp's
  // replace_buffers): the trace of every block's worker steps shows a placement, never a reset
  // of the buffers the last block used.
  const auto trace = e2e::temp_dir("trace") / "blocks.jsonl";
  setenv("BACKENDBENCH_TRACE_BLOCKS", trace.c_str(), 1);
  timed_against_good("scale_good");
  unsetenv("BACKENDBENCH_TRACE_BLOCKS");
  std::ifstream in(trace);
  int blocks = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("cmd", "") != "block") continue;
    ++blocks;
    const auto& steps = j["worker_steps"];
    EXPECT_TRUE(steps.contains("place_s")) << line;
    EXPECT_FALSE(steps.contains("reset_s")) << line;
  }
  EXPECT_GE(blocks, 3 * 2 * static_cast<int>(bb::kMinPairs)) << "3 timed cases, both sides, 8 pairs at least";
}

TEST(Paired, AnImplementationRunningAThreadOfItsOwnIsTimedOnEveryCpu) {
  // A helper thread that stays: neither side is pinned, and nothing says it was given up.
  // A known false reading (docs/RELIABILITY.md, "Limits"): on a busy 2-core VM the host's clock
  // can see each of this honest implementation's paced samples tens of microseconds longer than
  // its worker does, in most blocks of a pairing (where its threads and the host's land, block by
  // block), and audit_paced calls that IMPLAUSIBLE: in 3 to 4 runs of 6 on the VM of 2026-12-07,
  // as at 34fd2c9. Such a case is accepted here with that audit's message only; the others PASS.
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("paired"), "--impls", "scale_pool", "--timeout", "0.3", "--log-dir", logs.string()});
  const auto r = e2e::read_json(logs / "results.json");
  int timed = 0, implausible = 0;
  for (const auto& t : r["tests"]) {
    if (t.value("kind", "") != "performance") {
      EXPECT_EQ(t["verdict"], "PASS") << t.dump();
      continue;
    }
    if (t["verdict"] == "IMPLAUSIBLE") {
      ++implausible;
      EXPECT_NE(t.value("message", "").find("from its inputs' go to its end"), std::string::npos) << t.dump();
      continue;
    }
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    ++timed;
    EXPECT_FALSE(t["timing"].contains("pinned_cpu")) << t.dump();
    EXPECT_TRUE(t.contains("speedup_low")) << t.dump();
    for (const auto& n : t["timing"]["notes"]) EXPECT_EQ(n.get<std::string>().find("not pinned"), std::string::npos) << n;
  }
  EXPECT_EQ(timed + implausible, 3) << run.out << run.err;
  EXPECT_GE(timed, 1) << "every timed case read IMPLAUSIBLE: " << run.out << run.err;
}

TEST(Paired, AnImplementationThatLeavesItsCpuEndsThePinningOfBothSides) {
  // It gives itself every CPU in its first pinned block: found before the next, the pinning of
  // both sides ends, and the timing notes say why.
  for (const auto& t : timed_against_good("scale_wander", true)) {
    EXPECT_FALSE(t["timing"].contains("pinned_cpu")) << t.dump();
    bool said = false;
    for (const auto& n : t["timing"]["notes"]) said = said || n.get<std::string>().find("changed its CPU affinity while timed") != std::string::npos;
    EXPECT_TRUE(said) << t["timing"].dump();
  }
}
#endif
