// Hostile plugins, end to end: each gets its verdict, the sweep completes, the status is 1.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {

std::string verdict_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(results, impl))
    if (t["case"] == c) return t["verdict"];
  return "(none)";
}
std::string message_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(results, impl))
    if (t["case"] == c) return t["message"];
  return "(none)";
}

}  // namespace

TEST(Hostile, EveryFixtureGetsItsVerdictAndTheSweepCompletes) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--log-dir", logs.string(), "--test-timeout", "2",
                           "--check-determinism", "--timeout", "0.1", "--min-time", "0.001"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const std::string c = "correctness/small[n=16]";
  EXPECT_EQ(verdict_of(results, "scale__scale_good", c), "PASS");
  EXPECT_EQ(verdict_of(results, "scale__scale_segfault", c), "CRASH");
  EXPECT_NE(message_of(results, "scale__scale_segfault", c).find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_abort", c), "CRASH");
  EXPECT_NE(message_of(results, "scale__scale_abort", c).find("SIGABRT"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_exit", c), "CRASH");
  EXPECT_NE(message_of(results, "scale__scale_exit", c).find("exited with status 3"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_hang", c), "TIMEOUT");
  EXPECT_EQ(verdict_of(results, "scale__scale_overflow", c), "OUT_OF_BOUNDS");
  EXPECT_EQ(verdict_of(results, "scale__scale_unwritten", c), "UNWRITTEN");
  EXPECT_EQ(verdict_of(results, "scale__scale_mutate", c), "INPUT_MUTATED");
  EXPECT_EQ(verdict_of(results, "scale__scale_error", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_error", c).find("this fixture always refuses"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_wrong", c), "FAIL");
  EXPECT_EQ(verdict_of(results, "scale__scale_nondet", c), "NONDETERMINISTIC");

  // Exactly one verdict per (implementation, case): 11 implementations x 3 cases, also in the stream.
  EXPECT_EQ(results["tests"].size(), 33u);
  int streamed = 0;
  for (const auto& line : e2e::read_jsonl(logs / "results.jsonl")) streamed += line["event"] == "test";
  EXPECT_EQ(streamed, 33);

  // A crash is that test's alone: the crashing implementation's later cases ran in fresh
  // workers, and the good implementation that follows is timed and scored.
  EXPECT_EQ(verdict_of(results, "scale__scale_segfault", "performance/big"), "CRASH");
  EXPECT_EQ(verdict_of(results, "scale__scale_good", "performance/big"), "PASS");
  for (const auto& t : e2e::tests_of(results, "scale__scale_good"))
    if (t["kind"] == "performance") EXPECT_TRUE(t.contains("speedup")) << t.dump();
  // An incorrect implementation is never reported with a time or a speedup.
  for (const auto& t : e2e::tests_of(results, "scale__scale_wrong")) {
    EXPECT_FALSE(t.contains("timing")) << t.dump();
    EXPECT_FALSE(t.contains("speedup")) << t.dump();
  }
  const auto& scores = results["scores"];
  EXPECT_EQ(scores["passed"], 3);  // scale_good's three
  for (const auto& i : scores["implementations"])
    if (i["impl"] != "scale__scale_good") EXPECT_TRUE(i["speedup"].is_null()) << i.dump();
}

TEST(Hostile, NoIsolateRunsInProcess) {
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good,scale_wrong", "--no-isolate",
                           "--no-log", "--correctness-only"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("FAIL"), std::string::npos);
  EXPECT_NE(run.out.find("3 passed, 3 failed"), std::string::npos) << run.out;
}

TEST(Hostile, SigkillKeepsEveryFinishedTestInTheStream) {
  const auto logs = e2e::temp_dir("logs");
  const pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    const std::string root = e2e::fixture_root("hostile"), dir = logs.string();
    // scale_hang sorts after abort, error, exit and good: it blocks for a minute per case.
    execl(BB_BINARY, BB_BINARY, "--custom-ops-root", root.c_str(), "--log-dir", dir.c_str(), "--test-timeout", "60",
          "--correctness-only", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the tests before the hang have been streamed.
  int finished = 0;
  for (int i = 0; i < 600 && finished < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    finished = 0;
    std::ifstream in(logs / "results.jsonl");
    for (std::string line; std::getline(in, line);) finished += line.find("\"event\":\"test\"") != std::string::npos;
  }
  ASSERT_EQ(finished, 12) << "the run did not reach the hanging plugin";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto lines = e2e::read_jsonl(logs / "results.jsonl");  // every line parses
  int tests = 0;
  for (const auto& l : lines)
    if (l["event"] == "test") {
      ++tests;
      EXPECT_TRUE(l.contains("verdict"));
    }
  EXPECT_EQ(tests, 12);
  EXPECT_EQ(lines.back()["impl"], "scale__scale_good");
  EXPECT_FALSE(std::filesystem::exists(logs / "results.json"));  // never finished
}
