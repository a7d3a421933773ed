#include <gtest/gtest.h>

#include <fstream>

#include "run_files.hpp"
#include "run_record.hpp"

namespace {

bb::RunRecord sample_run() {
  bb::RunRecord r;
  r.command = "backendbench --ops scale";
  r.sweep_id = "00000000deadbeef";
  r.shard = {1, 3};
  r.provenance = {{"tool", {{"commit", "abc"}}}};
  bb::OpReport op;
  op.op = "scale";
  op.impls = {"scale__good", "scale__wrong"};
  r.ops.push_back(op);
  bb::TestResult pass;
  pass.id.op = "scale";
  pass.id.impl = "scale__good";
  pass.id.case_id = "performance/big";
  pass.outcome.verdict = bb::Verdict::pass;
  pass.id.device = "cuda";
  pass.id.device_index = 1;
  pass.id.repeat = 2;
  pass.performance.speedup = 2.5;
  bb::Timing t;
  t.stats.median = 1e-5;
  t.stats.samples = 40;
  pass.performance.timing = t;
  bb::TestResult fail = pass;
  fail.id.impl = "scale__wrong";
  fail.outcome.verdict = bb::Verdict::fail;
  fail.performance.timing.reset();
  fail.performance.speedup.reset();
  r.tests = {pass, fail};
  bb::rescore(r);
  return r;
}

std::filesystem::path temp_file(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "bb_run_record_test";
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST(RunRecord, RoundTripsThroughJson) {
  const auto r = sample_run();
  EXPECT_EQ(r.exit_code, 1);
  auto back = bb::run_from_json(bb::to_json(r), "mem");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->sweep_id, r.sweep_id);
  EXPECT_EQ(back->shard.index, 1);
  EXPECT_EQ(back->shard.count, 3);
  ASSERT_EQ(back->tests.size(), 2u);
  EXPECT_EQ(back->tests[0].id.device_index, 1);
  EXPECT_EQ(back->tests[0].id.repeat, 2);
  EXPECT_EQ(bb::test_key(back->tests[0]), "scale/scale__good/performance/big#2");
  EXPECT_EQ(back->scores.failed, 1);
  EXPECT_EQ(back->provenance["tool"]["commit"], "abc");
}

TEST(RunRecord, RefusesWhatIsNotItsOwnSchema) {
  auto j = bb::to_json(sample_run());
  j["schema_version"] = 1;
  auto old = bb::run_from_json(j, "old.json");
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("old.json: schema_version 1, expected 2"), std::string::npos) << old.error().message;
  auto foreign = bb::run_from_json(nlohmann::json{{"benchmarks", nlohmann::json::array()}}, "nv.json");
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("not a backendbench results file"), std::string::npos);
  j = bb::to_json(sample_run());
  j["tests"][0]["verdict"] = "GREAT";
  auto bad_verdict = bb::run_from_json(j, "x.json");
  ASSERT_FALSE(bad_verdict);
  EXPECT_NE(bad_verdict.error().message.find("unknown verdict 'GREAT'"), std::string::npos);
}

// A shard is {"index", "count"}, integers with 0 <= index < count: anything else is an error
// that names the file.
TEST(RunRecord, AShardIsTwoIntegersInRange) {
  auto r = sample_run();
  r.merged_shards = {{0, 3}, {2, 3}};
  const auto j = bb::to_json(r);
  EXPECT_EQ(j["shard"].dump(), R"({"count":3,"index":1})");
  EXPECT_EQ(j["merged_shards"].dump(), R"([{"count":3,"index":0},{"count":3,"index":2}])");
  const auto back = bb::run_from_json(j, "mem");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->merged_shards.size(), 2u);
  EXPECT_EQ(back->merged_shards[1].index, 2);
  EXPECT_EQ(back->merged_shards[1].count, 3);

  for (const auto& bad : {nlohmann::json{{"index", 1.5}, {"count", 3}}, nlohmann::json{{"index", 1}}, nlohmann::json{{"index", "1"}, {"count", 3}},
                          nlohmann::json::array({1, 3})}) {
    auto k = j;
    k["shard"] = bad;
    const auto read = bb::run_from_json(k, "s.json");
    ASSERT_FALSE(read) << bad.dump();
    EXPECT_EQ(read.error().message, "s.json: 'shard' must be {index, count} integers") << bad.dump();
  }
  auto k = j;
  k["merged_shards"][1] = {{"index", 3}, {"count", 3}};
  const auto out_of_range = bb::run_from_json(k, "s.json");
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(out_of_range.error().message, "s.json: shard 3/3 is out of range");
}

TEST(RunRecord, LoadsATruncatedFileWithAClearError) {
  const auto file = temp_file("cut.json");
  const std::string text = bb::to_json(sample_run()).dump(2);
  std::ofstream(file) << text.substr(0, text.size() / 2);
  auto r = bb::load_run(file);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not valid JSON (truncated?)"), std::string::npos) << r.error().message;
  auto missing = bb::load_run(temp_file("absent.json"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no such file"), std::string::npos);
}

TEST(RunRecord, AKilledRunIsReadFromItsStreamUpToATornLine) {
  const auto dir = temp_file("killed");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto run = sample_run();
  std::ofstream out(dir / "results.jsonl");
  out << nlohmann::json{{"event", "run_started"}, {"tool", "backendbench"}, {"schema_version", bb::kResultsSchemaVersion}, {"command", "x"}}.dump() << "\n";
  out << nlohmann::json{{"event", "sweep"}, {"sweep_id", "feed"}, {"shard", {{"index", 0}, {"count", 2}}}}.dump() << "\n";
  auto op = bb::op_report_json(run.ops[0]);
  op["event"] = "op";
  out << op.dump() << "\n";
  nlohmann::json t = run.tests[0];
  t["event"] = "test";
  out << t.dump() << "\n";
  out << t.dump().substr(0, 30);  // the line being written when the run was killed
  out.close();
  auto r = bb::load_run(dir);  // a log dir without results.json
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->sweep_id, "feed");
  EXPECT_EQ(r->shard.count, 2);
  ASSERT_EQ(r->tests.size(), 1u);
  EXPECT_EQ(r->tests[0].id.impl, "scale__good");
}
