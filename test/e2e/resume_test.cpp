// --resume DIR (docs/RUNNING.md, docs/RELIABILITY.md): DIR alone says which sweep to continue
// (its root, selection and options), and a resume that is refused writes nothing into DIR,
// whose finished results it would otherwise destroy.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

namespace {

// Every file of a folder, by name, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    files[e.path().filename().string()] = s.str();
  }
  return files;
}

// A root of op `scale`: its reference and good, wrong and error implementations (the hostile
// fixture's), so that a selection (--impls) matters.
fs::path small_root() {
  const auto root = e2e::temp_dir("root");
  const fs::path from = fs::path(e2e::fixture_root("hostile")) / "scale";
  fs::create_directories(root / "scale");
  for (const char* f : {"gen_input.yaml", "scale_reference.so", "scale_good.so", "scale_wrong.so", "scale_error.so"})
    fs::copy_file(from / f, root / "scale" / f);
  return root;
}

// The first run: two of the three implementations, correctness only, seed 11: six tests.
std::vector<std::string> first_args(const fs::path& root, const fs::path& logs) {
  return {"--custom-ops-root", root.string(), "--impls", "scale_good,scale_wrong", "--correctness-only", "--seed", "11",
          "--log-dir", logs.string()};
}

}  // namespace

TEST(Resume, ARefusedResumeWritesNothingIntoTheRunsFolder) {
  const auto root = small_root();
  const auto logs = e2e::temp_dir("logs");
  auto first = backendbench(first_args(root, logs));
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;  // scale_wrong fails
  const auto before = snapshot(logs);
  ASSERT_TRUE(before.count("results.json") && before.count("results.jsonl") && before.count("junit.xml"));

  // An option given again with another value: refused by name, before anything runs.
  for (const std::vector<std::string>& other : {std::vector<std::string>{"--seed", "12"},
                                                 std::vector<std::string>{"--impls", "scale_good"},
                                                 std::vector<std::string>{"--repeat", "2"}}) {
    std::vector<std::string> a = {"--resume", logs.string()};
    a.insert(a.end(), other.begin(), other.end());
    auto run = backendbench(a);
    EXPECT_EQ(run.exit_code, 2) << other[0] << "\n" << run.out << run.err;
    EXPECT_NE(run.err.find("another sweep"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(other[0] + " " + other[1]), std::string::npos) << "the message names the option\n" << run.err;
    EXPECT_TRUE(snapshot(logs) == before) << other[0] << ": the run's folder was rewritten";
  }

  // The same options, but the root's manifest changed since: the session finds another sweep id.
  std::ofstream(root / "scale" / "gen_input.yaml", std::ios::app) << "# edited after the run\n";
  auto changed = backendbench({"--resume", logs.string()});
  EXPECT_EQ(changed.exit_code, 2) << changed.out << changed.err;
  EXPECT_NE(changed.err.find("that run is another sweep"), std::string::npos) << changed.err;
  EXPECT_TRUE(snapshot(logs) == before) << "a refused --resume rewrote the run's folder";
  EXPECT_EQ(e2e::read_json(logs / "results.json")["tests"].size(), 6u);
}

TEST(Resume, TheRunsFolderAloneContinuesTheRun) {
  const auto root = small_root();
  const auto logs = e2e::temp_dir("logs");
  auto first = backendbench(first_args(root, logs));
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  const auto whole = e2e::read_json(logs / "results.json");
  ASSERT_EQ(whole["tests"].size(), 6u);

  // A run killed after three tests: results.jsonl up to its third test, nothing else.
  std::vector<std::string> kept;
  std::map<std::string, double> durations;  // "impl/case" -> duration_s of the kept tests
  {
    std::ifstream in(logs / "results.jsonl");
    int tests = 0;
    for (std::string line; std::getline(in, line) && tests < 3;) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("event", "") == "run_finished") break;
      if (j.value("event", "") == "test") {
        ++tests;
        durations[j["impl"].get<std::string>() + "/" + j["case"].get<std::string>()] = j["duration_s"].get<double>();
      }
      kept.push_back(line);
    }
  }
  ASSERT_EQ(durations.size(), 3u);
  for (const auto& e : fs::directory_iterator(logs)) fs::remove(e.path());
  {
    std::ofstream out(logs / "results.jsonl");
    for (const auto& line : kept) out << line << "\n";
  }

  // --resume DIR alone: the root, --impls, --correctness-only and --seed come from the stream.
  auto resumed = backendbench({"--resume", logs.string()});
  EXPECT_EQ(resumed.exit_code, 1) << resumed.out << resumed.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_TRUE(r["complete"].get<bool>());
  EXPECT_EQ(r["sweep_id"], whole["sweep_id"]);
  EXPECT_EQ(r["options"]["root"], whole["options"]["root"]);
  EXPECT_EQ(r["options"]["impls"], whole["options"]["impls"]);
  EXPECT_EQ(r["options"]["performance"], false);
  EXPECT_EQ(r["options"]["seed"], 11);
  ASSERT_EQ(r["tests"].size(), 6u);
  EXPECT_TRUE(e2e::tests_of(r, "scale__scale_error").empty()) << "the selection was not kept";
  for (const auto& t : r["tests"]) {
    const auto key = t["impl"].get<std::string>() + "/" + t["case"].get<std::string>();
    if (durations.count(key)) EXPECT_EQ(t["duration_s"].get<double>(), durations[key]) << key << " ran again";
    EXPECT_EQ(t["verdict"], t["impl"] == "scale__scale_good" ? "PASS" : "FAIL") << t.dump();
  }
  for (const char* f : {"junit.xml", "operator_summary.csv", "OVERALL_SUMMARY.md", "report.html"})
    EXPECT_TRUE(fs::exists(logs / f)) << f;
  for (const auto& e : fs::directory_iterator(logs))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();

  // An option that does not change the sweep may be given anew, and wins; the same value of a
  // sweep's option (the selection in another order) is no contradiction.
  auto again = backendbench({"--resume", logs.string(), "--test-timeout", "45", "--impls", "scale_wrong,scale_good"});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  auto a = e2e::read_json(logs / "results.json");
  EXPECT_EQ(a["options"]["test_timeout_s"], 45.0);
  EXPECT_EQ(a["tests"].size(), 6u);
  for (const auto& t : a["tests"])
    for (const auto& before : r["tests"])
      if (t["impl"] == before["impl"] && t["case"] == before["case"]) EXPECT_EQ(t["duration_s"], before["duration_s"]);
}

// The value variants belong to the sweep: a run made with `--variants tiny` continues with them,
// whatever BACKENDBENCH_VARIANTS says now; a run recorded before variants existed (no
// `variants` among its options) continues with none.
TEST(Resume, TheVariantsAreTheRunsOwn) {
  const auto root = small_root();
  // Truncates a run's stream to its run_started line and first test, the options edited by `edit`.
  auto cut = [](const fs::path& logs, const std::function<void(nlohmann::json&)>& edit) {
    std::vector<std::string> kept;
    {
      std::ifstream in(logs / "results.jsonl");
      for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line);
        if (j.value("event", "") == "run_started") edit(j["options"]);
        kept.push_back(j.dump());
        if (j.value("event", "") == "test") break;
      }
    }
    for (const auto& e : fs::directory_iterator(logs)) fs::remove(e.path());
    std::ofstream out(logs / "results.jsonl");
    for (const auto& line : kept) out << line << "\n";
  };
  const char* saved = std::getenv("BACKENDBENCH_VARIANTS");
  const std::string saved_value = saved ? saved : "";

  const auto logs = e2e::temp_dir("logs");
  auto args = first_args(root, logs);
  args.insert(args.end(), {"--variants", "tiny"});
  ASSERT_EQ(backendbench(args).exit_code, 1);
  const auto whole = e2e::read_json(logs / "results.json");
  ASSERT_EQ(whole["options"]["variants"], "tiny");
  cut(logs, [](nlohmann::json&) {});
  setenv("BACKENDBENCH_VARIANTS", "all", 1);
  const auto resumed = backendbench({"--resume", logs.string()});
  EXPECT_EQ(resumed.exit_code, 1) << resumed.out << resumed.err;
  const auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["sweep_id"], whole["sweep_id"]);
  EXPECT_EQ(r["tests"].size(), whole["tests"].size());

  const auto old_logs = e2e::temp_dir("old_logs");
  auto old_args = first_args(root, old_logs);
  old_args.insert(old_args.end(), {"--variants", "none"});
  ASSERT_EQ(backendbench(old_args).exit_code, 1);
  const auto old_whole = e2e::read_json(old_logs / "results.json");
  cut(old_logs, [](nlohmann::json& o) { o.erase("variants"); });
  const auto old_resumed = backendbench({"--resume", old_logs.string()});
  EXPECT_EQ(old_resumed.exit_code, 1) << old_resumed.out << old_resumed.err;
  EXPECT_EQ(e2e::read_json(old_logs / "results.json")["sweep_id"], old_whole["sweep_id"]);

  if (saved) setenv("BACKENDBENCH_VARIANTS", saved_value.c_str(), 1);
  else unsetenv("BACKENDBENCH_VARIANTS");
}
