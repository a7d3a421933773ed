// Sweeps with several workers, shards and repeats give the verdicts a plain run gives; results
// carry their provenance.
#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {

using Verdicts = std::map<std::string, std::string>;  // "impl/case#repeat" -> verdict

Verdicts verdicts(const nlohmann::json& results) {
  Verdicts v;
  for (const auto& t : results["tests"])
    v[t["impl"].get<std::string>() + "/" + t["case"].get<std::string>() + "#" + std::to_string(t.value("repeat", 0))] = t["verdict"];
  return v;
}

// The hostile root: every kind of verdict, a hang among them (a short test timeout). A shard
// may hold only passing tests: want_exit -1 takes 0 or 1.
nlohmann::json hostile_run(const std::string& name, std::vector<std::string> extra, int want_exit = 1) {
  const auto logs = e2e::temp_dir(name);
  std::vector<std::string> args = {"--custom-ops-root", e2e::fixture_root("hostile"), "--correctness-only", "--test-timeout", "2",
                                   "-q", "--log-dir", logs.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto run = backendbench(args);
  if (want_exit >= 0) EXPECT_EQ(run.exit_code, want_exit) << run.out << run.err;
  else EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.out << run.err;
  return e2e::read_json(logs / "results.json");
}

}  // namespace

TEST(Sweep, SeveralWorkersGiveTheVerdictsOfOne) {
  const auto one = hostile_run("one", {});
  const auto three = hostile_run("three", {"-j", "3"});
  EXPECT_EQ(verdicts(one), verdicts(three));
  EXPECT_GT(verdicts(one).size(), 20u);
  EXPECT_EQ(three["sweep_id"], one["sweep_id"]);  // workers are not part of the sweep
  // Results are in sweep order whatever order the workers finished them in.
  std::vector<std::string> a, b;
  for (const auto& t : one["tests"]) a.push_back(t["impl"].get<std::string>() + t["case"].get<std::string>());
  for (const auto& t : three["tests"]) b.push_back(t["impl"].get<std::string>() + t["case"].get<std::string>());
  EXPECT_EQ(a, b);
  EXPECT_EQ(three["workers"].size(), 3u);
  // One worker slot: every implementation's worker after the first was started during the last
  // job of the one before it (spare_worker.hpp), hostile ones around it or not.
  ASSERT_EQ(one["workers"].size(), 1u);
  const auto& w = one["workers"][0];
  EXPECT_GT(w["worker_starts"].get<int>(), 10) << w.dump();
  EXPECT_EQ(w["started_ahead"].get<int>(), w["worker_starts"].get<int>() - 1) << w.dump();
}

TEST(Sweep, ShardsPartitionTheSweep) {
  const auto whole = verdicts(hostile_run("whole", {}));
  Verdicts joined;
  std::set<std::string> ids;
  for (int i = 1; i <= 3; ++i) {
    const auto part = hostile_run("shard" + std::to_string(i), {"--shard", std::to_string(i) + "/3"}, -1);
    EXPECT_EQ(part["shard"]["index"], i - 1);
    EXPECT_EQ(part["shard"]["count"], 3);
    ids.insert(part["sweep_id"].get<std::string>());
    const auto v = verdicts(part);
    EXPECT_FALSE(v.empty());
    for (const auto& [k, verdict] : v) EXPECT_TRUE(joined.emplace(k, verdict).second) << k << " ran in two shards";
  }
  EXPECT_EQ(joined, whole);
  EXPECT_EQ(ids.size(), 1u) << "shards of one sweep share its id";
  const auto other_run = hostile_run("other", {"--shard", "1/3", "--run-id", "tomorrow"}, -1);
  EXPECT_NE(other_run["sweep_id"], *ids.begin()) << "another run of the same sweep has another id";
}

TEST(Sweep, RepeatRunsTheSweepAgain) {
  const auto once = hostile_run("once", {"--impls", "scale_good,scale_wrong"});
  const auto twice = hostile_run("twice", {"--impls", "scale_good,scale_wrong", "--repeat", "2"});
  EXPECT_EQ(twice["tests"].size(), 2 * once["tests"].size());
  std::set<int> repeats;
  for (const auto& t : twice["tests"]) repeats.insert(t["repeat"].get<int>());
  EXPECT_EQ(repeats, (std::set<int>{0, 1}));
  EXPECT_EQ(twice["repeats"], 2);
  EXPECT_EQ(twice["scores"]["tests"], 2 * once["scores"]["tests"].get<int>());
}

TEST(Sweep, ResultsCarryTheirProvenance) {
  const auto r = hostile_run("provenance", {"--impls", "scale_good"}, 0);
  const auto& p = r["provenance"];
  EXPECT_EQ(p["tool"]["version"], r["host"]["backendbench_version"]);
  EXPECT_FALSE(p["tool"]["commit"].get<std::string>().empty());
  const std::regex sha("[0-9a-f]{64}");
  std::set<std::string> plugins;
  for (const auto& e : p["plugins"]) {
    plugins.insert(e["path"].get<std::string>());
    EXPECT_TRUE(std::regex_match(e["sha256"].get<std::string>(), sha)) << e.dump();
    EXPECT_GT(e["size"].get<long>(), 1000) << e.dump();
  }
  EXPECT_TRUE(plugins.count("scale/scale_good.so"));
  EXPECT_TRUE(plugins.count("scale/scale_wrong.so"));  // every library of the op, selected or not
  ASSERT_EQ(p["manifests"].size(), 1u);
  EXPECT_TRUE(std::regex_match(p["manifests"][0]["sha256"].get<std::string>(), sha));
  EXPECT_TRUE(r["host"].contains("cpu"));
  EXPECT_TRUE(r["phases"].contains("run_s"));
  EXPECT_TRUE(r["options"].contains("seed"));
}

TEST(Sweep, BadSweepOptionsAreCommandErrors) {
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--shard", "4/3"}, {"--shard", "auto"}, {"--devices", "gpu0"}, {"-j", "0"}, {"--repeat", "0"}}) {
    auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--no-log", bad[0], bad[1]}, 30);
    EXPECT_EQ(run.exit_code, 2) << bad[0] << " " << bad[1] << "\n" << run.out << run.err;
    EXPECT_NE(run.err.find(bad[0] == "-j" ? "jobs" : bad[0].substr(2)), std::string::npos) << run.err;
  }
}

TEST(Sweep, EverythingSkippedCanMapToCTestsSkipCode) {
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--impls", "myop_cuda_naive", "--correctness-only",
                           "--no-log", "-q", "--skip-exit-code", "77"});
  if (run.exit_code == 0 && run.out.find("0 skipped") != std::string::npos) GTEST_SKIP() << "a CUDA device is present: nothing skipped";
  EXPECT_EQ(run.exit_code, 77) << run.out << run.err;
  // Without the flag, skipped is a pass.
  run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--impls", "myop_cuda_naive", "--correctness-only", "--no-log", "-q"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}
