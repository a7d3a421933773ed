// Hostile plugins, end to end: each gets its verdict, the sweep completes, the status is 1.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <algorithm>
#include <iterator>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "e2e_util.hpp"
#include "shell_util.hpp"

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
  const bool pid_namespace = results["host"]["sandbox"]["namespaces"].get<bool>();
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
  // The rest of the catalogue (docs/RELIABILITY.md).
  EXPECT_EQ(verdict_of(results, "scale__scale_throw", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_throw", c).find("a C++ exception escaped the plugin: thrown past the C boundary"),
            std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_thread", c), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_thread", c).find("changed after the call returned"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_child", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_child", c).find("left 1 child process running"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_chdir", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_chdir", c).find("changed the working directory"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_setenv", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_setenv", c).find("set BB_FIXTURE_WAS_HERE=1"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_hog", c), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_hog", c).find("--worker-memory-limit"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_spam", c), "PASS");
  EXPECT_EQ(verdict_of(results, "scale__scale_closefds", c), "CRASH");
  EXPECT_NE(message_of(results, "scale__scale_closefds", c).find("lost its connection to the host"), std::string::npos);
  // Its parent: the supervisor, whose death takes the worker along; in a PID namespace, that
  // namespace's init, which ignores it.
  if (pid_namespace) {
    EXPECT_EQ(verdict_of(results, "scale__scale_killparent", c), "PASS");
  } else {
    EXPECT_EQ(verdict_of(results, "scale__scale_killparent", c), "CRASH");
    EXPECT_NE(message_of(results, "scale__scale_killparent", c).find("SIGKILL"), std::string::npos);
  }
  EXPECT_EQ(verdict_of(results, "scale__scale_killhost", c), "CRASH");
  // Every case of those gets the same verdict: each test's worker is fresh or clean.
  for (const char* impl : {"scale__scale_thread", "scale__scale_child", "scale__scale_chdir", "scale__scale_setenv", "scale__scale_killhost"})
    for (const auto& t : e2e::tests_of(results, impl)) EXPECT_EQ(t["verdict"], verdict_of(results, impl, c)) << t.dump();

  // Exactly one verdict per (implementation, case): 45 implementations x 3 cases, also in the stream.
  EXPECT_EQ(results["tests"].size(), 135u);
  int streamed = 0;
  for (const auto& line : e2e::read_jsonl(logs / "results.jsonl")) streamed += line["event"] == "test";
  EXPECT_EQ(streamed, 135);
  // The host ignored the signals a plugin sent it, and said so; where each worker runs as a
  // user of its own or in a PID namespace of its own, its signals do not even reach the host.
  if (!results["host"]["sandbox"]["own_user"].get<bool>() && !pid_namespace)
    EXPECT_NE(run.err.find("ignored"), std::string::npos) << run.err;
  // SIGKILL to every other backendbench process (the host, the other workers): none reached.
  int tried = 0;  // it tries once per worker, and says what it managed
  for (const auto& t : e2e::tests_of(results, "scale__scale_killothers")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    const std::string said = t.value("output", "");
    if (said.empty()) continue;
    ++tried;
    EXPECT_NE(said.find(" 0 killed"), std::string::npos) << t.dump();
  }
  EXPECT_GE(tried, 1);

  // A crash is that test's alone: the crashing implementation's later cases ran in fresh
  // workers, and the good implementation that follows is timed and scored.
  // (Its tiny blocks, --timeout 0.1, may read IMPLAUSIBLE beside other tests on CI's two cores:
  // the clock audit's word on a busy machine, not a crash's reach.)
  EXPECT_EQ(verdict_of(results, "scale__scale_segfault", "performance/big"), "CRASH");
  const std::string good = verdict_of(results, "scale__scale_good", "performance/big");
  EXPECT_TRUE(good == "PASS" || good == "IMPLAUSIBLE") << good;
  for (const auto& t : e2e::tests_of(results, "scale__scale_good"))
    if (t["kind"] == "performance" && t["verdict"] == "PASS") EXPECT_TRUE(t.contains("speedup")) << t.dump();
  // An incorrect implementation is never reported with a time or a speedup.
  for (const auto& t : e2e::tests_of(results, "scale__scale_wrong")) {
    EXPECT_FALSE(t.contains("timing")) << t.dump();
    EXPECT_FALSE(t.contains("speedup")) << t.dump();
  }
  const auto& scores = results["scores"];
  // scale_lazy's second call of a size does nothing, which --check-determinism sees.
  EXPECT_EQ(verdict_of(results, "scale__scale_lazy", c), "NONDETERMINISTIC");
  // Scored with a speedup: the honest ones, and the attacks the walls leave doing the work
  // (docs/RELIABILITY.md): none of those reads faster than the honest implementation could.
  const std::set<std::string> work_now = {"scale__scale_good", "scale__scale_spam", "scale__scale_listed", "scale__scale_already",
                                          "scale__scale_notpoison", "scale__scale_patchref", "scale__scale_pagetrap",
                                          "scale__scale_hashcache", "scale__scale_memo", "scale__scale_nondet",
                                          // every timed sample on fresh inputs: they find no repeat to exploit
                                          "scale__scale_burst", "scale__scale_denormal",
                                          // frozen while the baseline runs, its spin is its own: ~1.0x, or IMPLAUSIBLE
                                          "scale__scale_sigslow",
                                          "scale__scale_killothers", "scale__scale_killparent",
                                          // refused ptrace by the system call filter, it computes (else ERROR)
                                          "scale__scale_trace",
                                          // refused writing outside its HOME by its filesystem view, it computes (else ERROR)
                                          "scale__scale_plant"};
  // Refused mprotect and /proc/self/mem where the worker's code is sealed and it runs as its own
  // user, it computes (else IMPLAUSIBLE: Adversarial.TheWorkersCodeIsSealedAgainstMprotect).
  const bool sealed = results["host"]["sandbox"].value("code_sealed", false) && results["host"]["sandbox"].value("own_user", false);
  for (const auto& i : scores["implementations"]) {
    if (i["speedup"].is_null()) continue;
    EXPECT_TRUE(work_now.count(i["impl"]) || (sealed && i["impl"] == "scale__scale_codepatch")) << i.dump();
    EXPECT_LT(i["speedup"].get<double>(), 3.0) << i.dump();
  }
  // A clock forged through a GOT slot or rewritten code: the worker's own code is checked.
  EXPECT_EQ(verdict_of(results, "scale__scale_clock", "performance/big"), "IMPLAUSIBLE") << message_of(results, "scale__scale_clock", "performance/big");
  EXPECT_EQ(verdict_of(results, "scale__scale_codepatch", "performance/big"), sealed ? "PASS" : "IMPLAUSIBLE")
      << message_of(results, "scale__scale_codepatch", "performance/big");
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
    // scale_hang sorts after 16 implementations (abort ... half, codepatch, elsewhere among them): it blocks
    // for a minute per case.
    execl(BB_BINARY, BB_BINARY, "--custom-ops-root", root.c_str(), "--log-dir", dir.c_str(), "--test-timeout", "60",
          "--correctness-only", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the tests before the hang have been streamed.
  int finished = 0;
  for (int i = 0; i < 600 && finished < 48; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    finished = 0;
    std::ifstream in(logs / "results.jsonl");
    for (std::string line; std::getline(in, line);) finished += line.find("\"event\":\"test\"") != std::string::npos;
  }
  ASSERT_EQ(finished, 48) << "the run did not reach the hanging plugin";
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
  EXPECT_EQ(tests, 48);
  EXPECT_EQ(lines.back()["impl"], "scale__scale_half");
  EXPECT_FALSE(std::filesystem::exists(logs / "results.json"));  // never finished

  // Nothing of the run outlives its host: no worker of it (`__worker <host pid>`), and no process
  // left of the host's own (a relay outside a worker's PID namespace) holding its log directory.
  auto left = [&] {
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      std::ifstream in(e.path() / "cmdline");
      std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      if (cmd.find("__worker " + std::to_string(pid)) != std::string::npos || cmd.find(logs.string()) != std::string::npos)
        found.push_back(e.path().filename().string() + ": " + cmd);
    }
    return found;
  };
  auto found = left();
  for (int i = 0; i < 40 && !found.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    found = left();
  }
  EXPECT_TRUE(found.empty()) << found.size() << " left, e.g. " << found.front();
}

TEST(Hostile, PrintedOutputIsCapturedCappedAndKeptWithTheResult) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_spam", "--log-dir", logs.string(),
                           "--correctness-only"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("xxxxxxxxxxxxxxxx"), std::string::npos) << "plugin output reached the console";
  EXPECT_EQ(run.err.find("xxxxxxxxxxxxxxxx"), std::string::npos) << "plugin output reached the console";
  const auto results = e2e::read_json(logs / "results.json");
  for (const auto& t : e2e::tests_of(results, "scale__scale_spam")) {
    EXPECT_EQ(t["verdict"], "PASS");
    EXPECT_GE(t["output_bytes"].get<std::size_t>(), 8u << 20);  // 4 MiB to each stream
    const std::string out = t["output"];
    EXPECT_LT(out.size(), 20000u);  // capped: its head and its tail
    EXPECT_NE(out.find("bytes left out"), std::string::npos);
    EXPECT_NE(out.find("spam: the last line"), std::string::npos);
  }
}

namespace {
// Starts backendbench in the background (output to files in `logs`); returns its pid.
pid_t start_backendbench(const std::vector<std::string>& args, const std::filesystem::path& logs) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open((logs.string() + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open((logs.string() + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(BB_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(BB_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}
int streamed_tests(const std::filesystem::path& logs) {
  int n = 0;
  std::ifstream in(logs / "results.jsonl");
  for (std::string line; std::getline(in, line);) n += line.find("\"event\":\"test\"") != std::string::npos;
  return n;
}
int wait_for_exit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}
}  // namespace

// SIGINT (and SIGTERM) mid-run: every report is written for the tests that finished, marked
// interrupted; --resume then runs only the rest and the reports hold the whole sweep.
TEST(Hostile, InterruptWritesEveryReportAndResumeRunsOnlyTheRest) {
  for (int sig : {SIGINT, SIGTERM}) {
    const auto logs = e2e::temp_dir(sig == SIGINT ? "int" : "term");
    const std::vector<std::string> args = {"--custom-ops-root", e2e::fixture_root("hostile"), "--impls",
                                           "scale_abort,scale_good,scale_hang,scale_wrong", "--test-timeout", "1",
                                           "--correctness-only", "--log-dir", logs.string()};
    const pid_t pid = start_backendbench(args, logs);
    // abort and good finish (6 tests); then scale_hang blocks for a second per case.
    int finished = 0;
    for (int i = 0; i < 600 && finished < 6; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      finished = streamed_tests(logs);
    }
    ASSERT_EQ(finished, 6);
    kill(pid, sig);
    EXPECT_EQ(wait_for_exit(pid, 30), 128 + sig);
    const auto first = e2e::read_json(logs / "results.json");
    EXPECT_EQ(first["interrupted"], sig == SIGINT ? "SIGINT" : "SIGTERM");
    EXPECT_FALSE(first["complete"].get<bool>());
    EXPECT_GE(first["tests"].size(), 6u);
    EXPECT_LT(first["tests"].size(), 12u);
    for (const char* f : {"junit.xml", "operator_summary.csv", "OVERALL_SUMMARY.md", "report.html"})
      EXPECT_TRUE(std::filesystem::exists(logs / f)) << f;
    for (const auto& t : first["tests"]) EXPECT_NE(t["impl"], "scale__scale_hang") << "a test abandoned in flight was reported";
    if (sig != SIGINT) continue;

    // --resume: the finished tests stand as they were (same durations), the rest run.
    auto resumed = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_abort,scale_good,scale_hang,scale_wrong",
                                 "--test-timeout", "1", "--correctness-only", "--resume", logs.string()});
    EXPECT_EQ(resumed.exit_code, 1) << resumed.out << resumed.err;
    const auto whole = e2e::read_json(logs / "results.json");
    EXPECT_TRUE(whole["complete"].get<bool>());
    EXPECT_TRUE(whole["interrupted"].is_null());
    ASSERT_EQ(whole["tests"].size(), 12u);
    for (const auto& before : first["tests"])
      for (const auto& after : whole["tests"])
        if (after["impl"] == before["impl"] && after["case"] == before["case"]) EXPECT_EQ(after["duration_s"], before["duration_s"]);
    EXPECT_EQ(verdict_of(whole, "scale__scale_hang", "correctness/small[n=16]"), "TIMEOUT");
    EXPECT_EQ(verdict_of(whole, "scale__scale_wrong", "correctness/small[n=16]"), "FAIL");

    // Another sweep cannot be resumed into this one.
    auto other = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good", "--correctness-only", "--resume",
                               logs.string(), "--no-log"});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("another sweep"), std::string::npos) << other.err;
  }
}

// Implementations that try to score without doing the work (docs/RELIABILITY.md): each is
// caught with its own message, and none is scored as correct.
TEST(Adversarial, NoneIsScoredAsCorrect) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good,scale_lazy,scale_ptrcache,scale_half,scale_listed,scale_steal",
                           "--random-cases", "2", "--log-dir", logs.string(), "--timeout", "0.1", "--min-time", "0.001"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const std::string perf = "performance/big";
  // Skips the work after its first call of a size: the last timed call of a block, which the
  // host checks, finds its output poisoned.
  EXPECT_EQ(verdict_of(results, "scale__scale_lazy", perf), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_lazy", perf).find("wrong while timed"), std::string::npos);
  EXPECT_NE(message_of(results, "scale__scale_lazy", perf).find("still poisoned"), std::string::npos);
  // Replays results by input address: other values in the same buffers (a timed sample's fresh
  // inputs, or a checked call's among the blocks) get the old result.
  EXPECT_EQ(verdict_of(results, "scale__scale_ptrcache", perf), "FAIL");
  const std::string ptrcache = message_of(results, "scale__scale_ptrcache", perf);
  EXPECT_TRUE(ptrcache.find("wrong while timed: a call on") != std::string::npos || ptrcache.find(", on fresh inputs: ") != std::string::npos)
      << ptrcache;
  // Looks for the reference's result in its own process's memory: it is not there (computed
  // after the call, wiped after the comparison), so the output stays poisoned. (Before that
  // order this fixture passed every case.)
  for (const auto& t : e2e::tests_of(results, "scale__scale_steal")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  // float32 computed through float16 misses float32's tolerance.
  EXPECT_EQ(verdict_of(results, "scale__scale_half", "correctness/small[n=16]"), "FAIL");
  // Tuned to the listed shapes: passes those, fails the drawn ones.
  EXPECT_EQ(verdict_of(results, "scale__scale_listed", "correctness/small[n=16]"), "PASS");
  int drawn = 0;
  for (const auto& t : e2e::tests_of(results, "scale__scale_listed"))
    if (t["case"].get<std::string>().find("~random") != std::string::npos) {
      ++drawn;
      EXPECT_EQ(t["verdict"], "FAIL") << t.dump();
    }
  EXPECT_EQ(drawn, 2);
  for (const auto& t : e2e::tests_of(results, "scale__scale_good")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  for (const auto& i : results["scores"]["implementations"])
    EXPECT_EQ(i["fully_correct"].get<bool>(), i["impl"] == "scale__scale_good") << i.dump();
}

// The attacks on the grader itself (test/fixtures/adversarial/, docs/RELIABILITY.md "Scores
// that hold"), each against the defence that stops it.
TEST(Adversarial, AttacksOnTheGraderAreCaught) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls",
                           "scale_good,scale_burst,scale_samplecache,scale_denormal,scale_reply,scale_escape,scale_borrow,scale_sigslow,"
                           "scale_clock,scale_codepatch",
                           "--log-dir", logs.string(), "--test-timeout", "8"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  auto results = e2e::read_json(logs / "results.json");
  const std::string perf = "performance/big";
  EXPECT_EQ(verdict_of(results, "scale__scale_good", perf), "PASS");
  // Skips work when calls come back to back, and leaves denormals in an input whose values repeat
  // for the baseline: every timed sample's inputs are new, made by the host between two samples,
  // so the second never finds what it waits for, and computes (a speedup of about 1.0); the first
  // computes where the host takes over 60 us between samples, and where it does not, a sample it
  // skipped is the one judged sooner or later (FAIL).
  for (const char* impl : {"scale__scale_burst", "scale__scale_denormal"}) {
    const std::string v = verdict_of(results, impl, perf), m = message_of(results, impl, perf);
    if (std::string(impl) == "scale__scale_burst" && v == "FAIL") {
      EXPECT_NE(m.find("wrong while timed: sample "), std::string::npos) << m;
      continue;
    }
    EXPECT_EQ(v, "PASS") << m;
    for (const auto& t : e2e::tests_of(results, impl))
      if (t["case"] == perf && t.contains("speedup")) EXPECT_LT(t["speedup"].get<double>(), 1.5) << t.dump();
  }
  // A cache keyed by a few sampled inputs: a checked call on inputs with a few elements changed.
  EXPECT_EQ(verdict_of(results, "scale__scale_samplecache", perf), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_samplecache", perf).find("a few elements changed"), std::string::npos);
  // A reply forged inside the worker: the host judges the buffers, not the worker's word.
  for (const auto& t : e2e::tests_of(results, "scale__scale_reply")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  // Borrows the reference from its folder: the worker cannot read it.
  for (const auto& t : e2e::tests_of(results, "scale__scale_borrow")) EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
  // A timer signal that spins while it is not in its own call: frozen while the baseline runs,
  // its own blocks carry the time, and the host's clock sees it.
  for (const auto& t : e2e::tests_of(results, "scale__scale_sigslow"))
    if (t["case"] == perf && t["verdict"] == "PASS") EXPECT_LT(t["speedup"].get<double>(), 1.5) << t.dump();
  // A clock forged inside the worker: through a GOT slot (found after the block it timed), or by
  // rewriting steady_clock::now's code (found by the audit of the worker's code after timing).
  EXPECT_EQ(verdict_of(results, "scale__scale_clock", perf), "IMPLAUSIBLE");
  EXPECT_NE(message_of(results, "scale__scale_clock", perf).find("the GOT slot of clock_gettime"), std::string::npos)
      << message_of(results, "scale__scale_clock", perf);
  // Where the worker's code is sealed and it runs as its own user, neither mprotect nor
  // /proc/self/mem lets it patch (Adversarial.TheWorkersCodeIsSealedAgainstMprotect): it computes.
  const nlohmann::json sandbox = results["host"]["sandbox"];
  if (sandbox.value("code_sealed", false) && sandbox.value("own_user", false)) {
    EXPECT_EQ(verdict_of(results, "scale__scale_codepatch", perf), "PASS");
  } else {
    EXPECT_EQ(verdict_of(results, "scale__scale_codepatch", perf), "IMPLAUSIBLE");
    EXPECT_NE(message_of(results, "scale__scale_codepatch", perf).find("the code of"), std::string::npos)
        << message_of(results, "scale__scale_codepatch", perf);
    EXPECT_NE(message_of(results, "scale__scale_codepatch", perf).find("libstdc++"), std::string::npos);
  }
  // An escaped daemon that rewrites the results once the host is gone: killed with its worker's
  // cgroup, and the log directory is not writable (nor visible) from the worker anyway.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  results = e2e::read_json(logs / "results.json");
  for (const auto& t : e2e::tests_of(results, "scale__scale_escape")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  for (const auto& line : e2e::read_jsonl(logs / "results.jsonl"))
    if (line.value("impl", "") == "scale__scale_escape") EXPECT_EQ(line["verdict"], "UNWRITTEN") << line.dump();
  // Each is caught, or kept from its attack and honest (sigslow, burst, denormal; codepatch where sealed).
  const bool codepatch_kept_out = sandbox.value("code_sealed", false) && sandbox.value("own_user", false);
  const std::set<std::string> kept_honest = {"scale__scale_sigslow", "scale__scale_burst", "scale__scale_denormal"};
  for (const auto& i : results["scores"]["implementations"])
    if (!kept_honest.count(i["impl"]) && !(codepatch_kept_out && i["impl"] == "scale__scale_codepatch"))
      EXPECT_EQ(i["fully_correct"].get<bool>(), i["impl"] == "scale__scale_good") << i.dump();
}

// A clock forged for the one reading that ends each sample and put back inside it: the worker's
// check of its GOT after the block finds every slot as loaded, and it read 8.5x (PASS) before
// the host timed each sample on fresh inputs from its go to its end (audit_paced).
TEST(Adversarial, AClockForgedForOneReadingIsSeenAroundEachSample) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("clock"), "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const std::string perf = "performance/big", m = message_of(results, "scale__scale_clock_restore", perf);
  EXPECT_EQ(verdict_of(results, "scale__scale_clock_restore", perf), "IMPLAUSIBLE") << m;
  EXPECT_NE(m.find("each of its samples took about"), std::string::npos) << m;
  EXPECT_EQ(m.find("GOT"), std::string::npos) << m;  // put back before the worker looked
  EXPECT_EQ(verdict_of(results, "scale__scale_good", perf), "PASS") << message_of(results, "scale__scale_good", perf);
}

// The workers' system call filter (core/src/run/workers/syscall_filter.hpp): a plugin that traces another
// process (its own exec'd child: the one a worker can reach) is refused, and computes honestly;
// with the filter turned off the same plugin traces it, and host.sandbox says the filter is off.
// The worker's filesystem view (landlock.hpp), attack first: scale_elsewhere loads a copy of
// the reference from outside the run (one planted in /var/tmp for this test, or a build tree's
// beside the binary) and hands it every call; scale_plant creates files in /tmp, /var/tmp and
// /etc. With the view: the copy cannot be read (ERROR, "no copy ... readable") and nothing can be
// written outside the worker's HOME (PASS, computed); with BACKENDBENCH_SANDBOX_OFF=landlock:
// the borrowed reference passes and the planted files are made (ERROR naming them).
TEST(Adversarial, AWorkerReadsAndWritesOnlyWhatItsFilesystemViewAllows) {
  const std::filesystem::path elsewhere = "/var/tmp/backendbench_elsewhere";
  std::error_code ec;
  std::filesystem::create_directories(elsewhere, ec);
  std::filesystem::permissions(elsewhere, std::filesystem::perms(0755), ec);
  std::filesystem::copy_file(std::filesystem::path(e2e::fixture_root("hostile")) / "scale" / "scale_reference.so", elsewhere / "scale_reference.so",
                             std::filesystem::copy_options::overwrite_existing, ec);
  ASSERT_FALSE(ec) << ec.message();
  std::filesystem::permissions(elsewhere / "scale_reference.so", std::filesystem::perms(0755), ec);
  const auto run_with = [](const std::string& env, const std::filesystem::path& logs) {
    return e2e::shell(fmt::format("{} {} --custom-ops-root {} --impls scale_elsewhere,scale_plant --correctness-only --log-dir {}", env,
                                  e2e::sh_quote(BB_BINARY), e2e::sh_quote(e2e::fixture_root("hostile")), e2e::sh_quote(logs.string())));
  };
  const auto on_logs = e2e::temp_dir("view_on"), off_logs = e2e::temp_dir("view_off");
  const auto on = run_with("", on_logs);
  const auto off = run_with("BACKENDBENCH_SANDBOX_OFF=landlock", off_logs);
  std::filesystem::remove_all(elsewhere, ec);
  const auto on_results = e2e::read_json(on_logs / "results.json");
  if (on_results["host"]["sandbox"]["landlock_abi"].is_null()) GTEST_SKIP() << "no Landlock here: " << on_results["host"]["sandbox"].dump();
  EXPECT_EQ(on.exit_code, 1) << on.output;
  for (const auto& t : e2e::tests_of(on_results, "scale__scale_elsewhere")) {
    EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("no copy of scale_reference.so readable outside the run"), std::string::npos) << t.dump();
  }
  std::string refused;
  for (const auto& t : e2e::tests_of(on_results, "scale__scale_plant")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    refused += t.value("output", "");
  }
  for (const char* dir : {"/tmp/", "/var/tmp/"})
    EXPECT_NE(refused.find(fmt::format("{}backendbench_planted_", dir)), std::string::npos) << refused;
  EXPECT_NE(refused.find("Permission denied"), std::string::npos) << refused;

  const auto off_results = e2e::read_json(off_logs / "results.json");
  EXPECT_TRUE(off_results["host"]["sandbox"]["landlock_abi"].is_null());
  EXPECT_NE(off_results["host"]["sandbox"]["off"].dump().find("the filesystem view"), std::string::npos) << off_results["host"]["sandbox"].dump();
  for (const auto& t : e2e::tests_of(off_results, "scale__scale_elsewhere")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  for (const auto& t : e2e::tests_of(off_results, "scale__scale_plant")) {
    EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("wrote outside the run: /tmp/backendbench_planted_"), std::string::npos) << t.dump();
  }
}

TEST(Adversarial, TracingAnotherProcessIsRefusedByTheSystemCallFilter) {
  const auto run_with = [](const std::string& env, const std::filesystem::path& logs) {
    return e2e::shell(fmt::format("{} {} --custom-ops-root {} --impls scale_trace --correctness-only --log-dir {}", env,
                                  e2e::sh_quote(BB_BINARY), e2e::sh_quote(e2e::fixture_root("hostile")), e2e::sh_quote(logs.string())));
  };
  const auto on_logs = e2e::temp_dir("filter_on"), off_logs = e2e::temp_dir("filter_off");
  const auto on = run_with("", on_logs);
  const auto on_results = e2e::read_json(on_logs / "results.json");
  if (on_results["host"]["sandbox"]["syscall_filter"].is_null()) GTEST_SKIP() << "no system call filter here: " << on_results["host"]["sandbox"].dump();
  EXPECT_EQ(on.exit_code, 0) << on.output;
  std::string said;  // on stderr, in the test whose call tried it first
  for (const auto& t : e2e::tests_of(on_results, "scale__scale_trace")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    said += t.value("output", "");
  }
  EXPECT_NE(said.find("ptrace: Operation not permitted; process_vm_readv: Operation not permitted"), std::string::npos) << said;
  const auto refused = on_results["host"]["sandbox"]["syscall_filter"].get<std::vector<std::string>>();
  for (const char* call : {"ptrace", "process_vm_readv", "mount", "bpf", "perf_event_open", "keyctl", "io_uring_setup", "unshare"})
    EXPECT_NE(std::find(refused.begin(), refused.end(), call), refused.end()) << call;

  const auto off = run_with("BACKENDBENCH_SANDBOX_OFF=seccomp", off_logs);
  const auto off_results = e2e::read_json(off_logs / "results.json");
  EXPECT_EQ(off.exit_code, 1) << off.output;
  EXPECT_TRUE(off_results["host"]["sandbox"]["syscall_filter"].is_null());
  EXPECT_NE(off_results["host"]["sandbox"]["off"].dump().find("the system call filter"), std::string::npos) << off_results["host"]["sandbox"].dump();
  for (const auto& t : e2e::tests_of(off_results, "scale__scale_trace")) {
    EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("traced another process: ptrace attached to its child"), std::string::npos) << t.dump();
  }
}

// The worker's own code sealed (worker/code_seal.hpp), attack first: scale_codepatch makes
// libstdc++'s steady_clock::now writable with mprotect to patch a jump into it. With
// BACKENDBENCH_SANDBOX_OFF=mseal it patches, and the hash of the worker's code after the test finds
// it (IMPLAUSIBLE); sealed, mprotect is refused, and so is its fallback, /proc/self/mem, where the
// worker runs as its own user (undumpable: its /proc files are root's): it computes, PASS.
TEST(Adversarial, TheWorkersCodeIsSealedAgainstMprotect) {
  const auto run_with = [](const std::string& env, const std::filesystem::path& logs) {
    return e2e::shell(fmt::format("{} {} --custom-ops-root {} --impls scale_codepatch --log-dir {} --test-timeout 8", env, e2e::sh_quote(BB_BINARY),
                                  e2e::sh_quote(e2e::fixture_root("hostile")), e2e::sh_quote(logs.string())));
  };
  const auto said_in = [](const nlohmann::json& results) {
    std::string said;
    for (const auto& t : e2e::tests_of(results, "scale__scale_codepatch")) said += t.value("output", "");
    return said;
  };
  const std::string perf = "performance/big";
  const auto on_logs = e2e::temp_dir("seal_on"), off_logs = e2e::temp_dir("seal_off");
  const auto on = run_with("", on_logs);
  const auto on_results = e2e::read_json(on_logs / "results.json");
  if (!on_results["host"]["sandbox"].value("code_sealed", false)) GTEST_SKIP() << "no mseal here: " << on_results["host"]["sandbox"].dump();
  EXPECT_NE(said_in(on_results).find("mprotect refused (Operation not permitted)"), std::string::npos) << said_in(on_results) << on.output;
  if (on_results["host"]["sandbox"].value("own_user", false)) {
    EXPECT_NE(said_in(on_results).find("could not write through /proc/self/mem: Permission denied"), std::string::npos) << said_in(on_results);
    for (const auto& t : e2e::tests_of(on_results, "scale__scale_codepatch")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  }
  const auto off = run_with("BACKENDBENCH_SANDBOX_OFF=mseal", off_logs);
  const auto off_results = e2e::read_json(off_logs / "results.json");
  EXPECT_FALSE(off_results["host"]["sandbox"].value("code_sealed", true));
  EXPECT_NE(off_results["host"]["sandbox"]["off"].dump().find("BACKENDBENCH_SANDBOX_OFF=mseal"), std::string::npos);
  EXPECT_NE(said_in(off_results).find("patched through mprotect"), std::string::npos) << said_in(off_results) << off.output;
  EXPECT_EQ(verdict_of(off_results, "scale__scale_codepatch", perf), "IMPLAUSIBLE") << off.output;
  EXPECT_NE(message_of(off_results, "scale__scale_codepatch", perf).find("the code of"), std::string::npos);
}

// Result caches keyed by the inputs' content on a compute-bound op (issue 39 item 1, attack
// first: test/fixtures/content_cache/): right on every call, so every check passes. Where a
// block's timed calls repeat one input (BACKENDBENCH_SANDBOX_OFF=fresh) they are faster than any
// honest kernel (78-116x on the VM: docs/RELIABILITY.md); with every timed sample on inputs the
// host made for it just before (fresh_inputs.hpp), no key ever hits: they compute, and read about
// as fast as the honest implementation (scripts/bench_content_cache.sh measures both).
TEST(Adversarial, ContentCachesGainNothingWhereEveryTimedSampleHasFreshInputs) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("content_cache"), "--log-dir", logs.string(), "--test-timeout", "30"});
  const auto r = e2e::read_json(logs / "results.json");
  std::vector<std::string> impls = {"poly__poly_good", "poly__poly_hashcache", "poly__poly_sampledkey"};
  bool torch = true;
  for (const auto& t : e2e::tests_of(r, "poly__poly_torch"))
    torch = torch && t.value("message", "").find("No module named 'torch'") == std::string::npos &&
            t.value("message", "").find("no Python bridge") == std::string::npos;
  if (torch) impls.insert(impls.end(), {"poly__poly_torch", "poly__poly_torchcache"});
  EXPECT_TRUE(run.exit_code == (torch ? 0 : 2) || run.exit_code == 1) << run.out << run.err;
  for (const auto& impl : impls) {
    const auto tests = e2e::tests_of(r, impl);
    EXPECT_EQ(tests.size(), 3u) << impl;
    for (const auto& t : tests) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  }
  std::map<std::string, double> speedup;
  for (const auto& i : r["scores"]["implementations"])
    if (!i["speedup"].is_null()) speedup[i["impl"]] = i["speedup"].get<double>();
  ASSERT_TRUE(speedup.count("poly__poly_good")) << r["scores"].dump();
  EXPECT_GT(speedup["poly__poly_good"], 0.67);
  EXPECT_LT(speedup["poly__poly_good"], 1.5);
  for (const char* cache : {"poly__poly_hashcache", "poly__poly_sampledkey"}) {
    ASSERT_TRUE(speedup.count(cache)) << cache;
    EXPECT_LT(speedup[cache], 1.5) << cache << ": it computes every sample, and hashes besides";
  }
  if (torch) {
    ASSERT_TRUE(speedup.count("poly__poly_torch") && speedup.count("poly__poly_torchcache"));
    // 12-13x against 1.5x where inputs repeat (below); here within noise of the honest one (a
    // PyTorch call's speedup on the busy 2-core VM: 1.54x of it once in a CI run of 2026-12-07).
    EXPECT_LT(speedup["poly__poly_torchcache"], 2.0 * speedup["poly__poly_torch"]) << "12-13x against 1.5x where inputs repeat";
  }
  EXPECT_GT(r["phases"]["tests"].value("fresh_inputs_s", 0.0), 0.0) << r["phases"].dump();

  // The attack, where each block's timed calls repeat the case's inputs: the caches win.
  const auto off_logs = e2e::temp_dir("fresh_off");
  const auto off = e2e::shell(fmt::format("BACKENDBENCH_SANDBOX_OFF=fresh {} --custom-ops-root {} --impls poly_hashcache,poly_sampledkey "
                                          "--test-timeout 30 --log-dir {}",
                                          e2e::sh_quote(BB_BINARY), e2e::sh_quote(e2e::fixture_root("content_cache")), e2e::sh_quote(off_logs.string())));
  const auto o = e2e::read_json(off_logs / "results.json");
  EXPECT_NE(o["host"]["sandbox"]["off"].dump().find("BACKENDBENCH_SANDBOX_OFF=fresh"), std::string::npos) << o["host"]["sandbox"].dump();
  // (A cache's timed case may read IMPLAUSIBLE where the machine is busy: its calls are short
  // against the eviction around each sample, and the host's clock sees the difference.)
  for (const auto& t : o["tests"]) EXPECT_TRUE(t["verdict"] == "PASS" || t["verdict"] == "IMPLAUSIBLE") << t.dump();
  int scored = 0;
  for (const auto& i : o["scores"]["implementations"]) {
    if (i["speedup"].is_null()) continue;
    ++scored;
    EXPECT_GT(i["speedup"].get<double>(), 5.0) << i.dump();
  }
  EXPECT_GE(scored, 1) << off.output;
}

// A SIGSEGV in a plugin built with debug information (RelWithDebInfo, the default) names its
// function, file and line, and the line that runs that test again alone, in the foreground,
// which does crash there. A report the plugin forges (naming files outside the run) has none of
// its files read: its frames stay unplaced.
TEST(Hostile, ACrashNamesItsFileAndLineAndTheLineThatRunsItAgain) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("crash"), "--impls", "scale_segfault,scale_forged", "--cases", "correctness/small[n=16]",
                           "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("in run(bb::Call&) at scale_segfault.cpp:5 (scale_segfault.so+0x"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("again, alone, in the foreground: "), std::string::npos) << run.out;
  const auto results = e2e::read_json(logs / "results.json");
  const auto segfault = e2e::tests_of(results, "scale__scale_segfault");
  ASSERT_EQ(segfault.size(), 1u);
  const auto& crash = segfault[0]["crash"];
  EXPECT_EQ(crash["signal"], "SIGSEGV") << crash.dump();
  EXPECT_EQ(crash["address"], "0x0") << crash.dump();
  ASSERT_FALSE(crash["frames"].empty());
  EXPECT_EQ(std::filesystem::path(crash["frames"][0].value("file", "")).filename(), "scale_segfault.cpp") << crash.dump();
  EXPECT_EQ(crash["frames"][0].value("line", 0), 5) << crash.dump();
  EXPECT_EQ(segfault[0].value("output", "").find("backendbench-frame"), std::string::npos) << "the report's lines are taken out of what it printed";
  // The HTML report folds the same frames and line under the message.
  std::ifstream html_in(logs / "report.html");
  const std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<summary>where it crashed</summary>"), std::string::npos);
  EXPECT_NE(html.find("scale_segfault.cpp:5"), std::string::npos);
  // The rerun, as printed: that test alone, in this process, which the fault ends.
  const std::string rerun = crash.value("rerun", "");
  EXPECT_NE(rerun.find("--no-isolate"), std::string::npos) << rerun;
  const int status = std::system(fmt::format("BACKENDBENCH_VARIANTS=none {} --no-log > {} 2>&1", rerun, (logs / "rerun.txt").string()).c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) > 128 - 1) << "the shell reports the fault's signal: " << status;
  std::ifstream printed(logs / "rerun.txt");
  const std::string text((std::istreambuf_iterator<char>(printed)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("scale: 1 case(s), 1 implementation(s)"), std::string::npos) << text;
  // The forged report names SIGSEGV, as the process died: its frames are kept, none placed.
  const auto forged = e2e::tests_of(results, "scale__scale_forged");
  ASSERT_EQ(forged.size(), 1u);
  EXPECT_EQ(forged[0]["verdict"], "CRASH");
  EXPECT_EQ(forged[0]["crash"]["frames"].size(), 2u) << forged[0].dump();
  for (const auto& f : forged[0]["crash"]["frames"]) {
    EXPECT_FALSE(f.contains("function")) << f.dump();
    EXPECT_FALSE(f.contains("file")) << f.dump();
  }
}

// Every wall turned off by name (BACKENDBENCH_SANDBOX_OFF) is said in the run's record, one line
// each from the walls' table (sandbox.cpp kWalls): a run with walls down never reads as a run
// with every wall up. The namespaces' parts are said where the namespaces are up at all (as
// root); the Python witness and fresh inputs everywhere.
TEST(Sandbox, EveryWallTurnedOffIsSaidInTheRunsRecord) {
  const auto logs = e2e::temp_dir("walls_off");
  const auto run = e2e::shell(fmt::format("BACKENDBENCH_SANDBOX_OFF=net,ipc,pid,ro,user,witness,fresh {} --custom-ops-root {} --impls scale_good "
                                          "--correctness-only --log-dir {}",
                                          e2e::sh_quote(BB_BINARY), e2e::sh_quote(e2e::fixture_root("hostile")), e2e::sh_quote(logs.string())));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto sandbox = e2e::read_json(logs / "results.json")["host"]["sandbox"];
  const std::string off = sandbox["off"].dump();
  std::vector<std::string> said = {"BACKENDBENCH_SANDBOX_OFF=witness", "BACKENDBENCH_SANDBOX_OFF=fresh"};
  if (sandbox.value("namespaces", false))
    for (const char* part : {"net", "ipc", "pid", "ro", "user"}) said.push_back(fmt::format("BACKENDBENCH_SANDBOX_OFF={}", part));
  for (const auto& s : said) EXPECT_NE(off.find(s), std::string::npos) << s << " not said: " << sandbox.dump();
  EXPECT_FALSE(sandbox.value("own_user", true)) << "a user per worker is off: " << sandbox.dump();
  // And the same run with every wall up says none of them.
  const auto up_logs = e2e::temp_dir("walls_up");
  e2e::shell(fmt::format("{} --custom-ops-root {} --impls scale_good --correctness-only --log-dir {}", e2e::sh_quote(BB_BINARY),
                         e2e::sh_quote(e2e::fixture_root("hostile")), e2e::sh_quote(up_logs.string())));
  const std::string up = e2e::read_json(up_logs / "results.json")["host"]["sandbox"]["off"].dump();
  EXPECT_EQ(up.find("BACKENDBENCH_SANDBOX_OFF"), std::string::npos) << up;
}
