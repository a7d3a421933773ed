// The console, end to end: what a CI log gets (short, plain) and what a terminal gets (one status
// line rewritten in place), from the real binary.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Runs backendbench on a pseudo-terminal 120 columns wide; what it wrote, and its exit status.
e2e::Run on_a_terminal(const std::vector<std::string>& args, double timeout_s = 120, const char* no_color = nullptr) {
  e2e::Run run;
  int master = -1;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 120;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty failed";
    return run;
  }
  if (pid == 0) {
    if (no_color) setenv("NO_COLOR", no_color, 1);
    else unsetenv("NO_COLOR");
    std::vector<char*> argv{const_cast<char*>(BB_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(BB_BINARY, argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      ADD_FAILURE() << "backendbench did not finish in " << timeout_s << " s";
      break;
    }
    pollfd fd{master, POLLIN, 0};
    if (poll(&fd, 1, 200) <= 0) continue;
    char buf[65536];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the child is gone and the terminal closed
    run.out.append(buf, static_cast<size_t>(n));
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// The shipped implementations built for CUDA: "<op>__<stem>" of each *cuda*.so in the root.
std::set<std::string> cuda_impls() {
  std::set<std::string> impls;
  for (const auto& op : std::filesystem::directory_iterator(BB_SHIPPED_ROOT)) {
    if (!op.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(op.path())) {
      const std::string stem = f.path().stem().string();
      if (f.path().extension() == ".so" && stem.find("cuda") != std::string::npos)
        impls.insert(op.path().filename().string() + "__" + stem);
    }
  }
  return impls;
}

}  // namespace

TEST(Console, ACiLogOfTheShippedOpsIsShortAndPlain) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--correctness-only", "--log-dir", logs.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  for (const auto& d : results.value("devices", nlohmann::json::array()))
    if (d.value("name", "") == "cuda" && d.value("available", false)) GTEST_SKIP() << "a CUDA device is present: nothing is SKIPPED";

  // Not a terminal: no carriage return, no escape code.
  EXPECT_EQ(run.out.find('\r'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  // Far fewer lines than tests: passing tests get none, SKIPPED ones are grouped.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex(R"(\n(\d+) passed, (\d+) failed, (\d+) skipped\n)"))) << run.out;
  const int tests = std::stoi(m[1]) + std::stoi(m[2]) + std::stoi(m[3]);
  EXPECT_GE(tests, 90);
  const auto lines = lines_of(run.out);
  EXPECT_LT(lines.size() * 3, static_cast<std::size_t>(tests)) << run.out;
  for (const auto& l : lines) EXPECT_FALSE(std::regex_search(l, std::regex(R"(^\[\d+/\d+\] )"))) << "a line for one test: " << l;
  EXPECT_NE(run.out.find("\nexit status 0\n"), std::string::npos) << run.out;

  // Each CUDA implementation: one line, saying that its tests are SKIPPED and why.
  const auto impls = cuda_impls();
  for (const auto& impl : impls) {
    std::vector<std::string> said;
    for (const auto& l : lines)
      if (l.rfind("SKIPPED " + impl + ":", 0) == 0) said.push_back(l);
    ASSERT_EQ(said.size(), 1u) << impl << "\n" << run.out;
    EXPECT_TRUE(std::regex_search(said[0], std::regex("^SKIPPED " + impl + R"(: all \d+ tests: \S.*)"))) << said[0];
    EXPECT_TRUE(std::regex_search(said[0], std::regex("cuda", std::regex::icase))) << said[0];  // the reason names the device
    // Said as it is: no driver, or no GPU; never "driver version is insufficient" for a machine
    // without either.
    EXPECT_EQ(said[0].find("insufficient"), std::string::npos) << said[0];
    EXPECT_TRUE(said[0].find("no NVIDIA driver on this machine") != std::string::npos ||
                said[0].find("no CUDA-capable device") != std::string::npos || said[0].find("no cuda runtime plugin") != std::string::npos)
        << said[0];
    EXPECT_EQ(e2e::tests_of(results, impl).size(), static_cast<std::size_t>(std::stoi(said[0].substr(said[0].find(": all ") + 6))))
        << said[0];
  }
  if (impls.empty()) GTEST_SKIP() << "built without CUDA: no CUDA implementation in " << BB_SHIPPED_ROOT << " to be SKIPPED";
}

TEST(Console, ACiLogGetsTheFailuresWithTheirMessages) {
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good,scale_wrong,scale_segfault",
                           "--correctness-only", "--no-log"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\n\[\d+/9\] FAIL +scale__scale_wrong correctness/small\[n=16\]\n +output 'y': \d+ of 16 elements differ)")))
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\n\[\d+/9\] CRASH +scale__scale_segfault \S+\n +killed by signal SIGSEGV)"))) << run.out;
  EXPECT_EQ(run.out.find("scale__scale_good correctness"), std::string::npos) << run.out;  // passes get no line
  EXPECT_NE(run.out.find("\n3 passed, 6 failed, 0 skipped\n"), std::string::npos) << run.out;
}

TEST(Console, ATerminalGetsAStatusLineRewrittenInPlace) {
  auto run = on_a_terminal({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good,scale_wrong", "--correctness-only",
                            "--no-log"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  // "\r ESC[K [done/total]  pass P  fail F  skip S  elapsed T  eta E"
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\r\x1b\[K\[\d+/6\]  pass \d+  fail \d+  skip \d+  elapsed \d+s  eta (-|\d+s))")))
      << run.out;
  // The failures' lines go above it, their verdict in red; the table ends the run.
  EXPECT_NE(run.out.find("\x1b[31mFAIL\x1b[0m"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("3 passed, 3 failed, 0 skipped"), std::string::npos) << run.out;
  // The status line is gone before the table.
  const auto table = run.out.find("implementation ");
  ASSERT_NE(table, std::string::npos);
  EXPECT_EQ(run.out.find("  eta ", table), std::string::npos) << run.out;
}

// NO_COLOR (no-color.org): the same terminal, its status line still rewritten in place, and no
// colour at all.
TEST(Console, NoColorOnATerminalKeepsTheStatusLineAndDropsTheColours) {
  auto run = on_a_terminal({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good,scale_wrong", "--correctness-only",
                            "--no-log"},
                           120, "1");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\r\x1b\[K\[\d+/6\]  pass \d+)"))) << run.out;
  EXPECT_EQ(run.out.find("\x1b[31m"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\x1b[32m"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("FAIL             scale__scale_wrong"), std::string::npos) << run.out;
}

// --table: each case's shapes, then its implementations' figures; tests.csv has the same as rows,
// and every passing test says how close it came to the reference (issue 40's per-case table).
TEST(Console, TheTableShowsEachCasesShapesFiguresAndHowCloseItCame) {
  const auto logs = e2e::temp_dir("table");
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "rmsnorm", "--impls", "rmsnorm_cpp", "--table", "--variants", "none",
                           "--min-time", "0.01", "--max-samples", "5", "--timeout", "0.05", "--log-dir", logs.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\nrmsnorm per case: \d+ cases\n +implementation +verdict +median +GB/s +TFLOP/s +% peak +speedup +interval +max abs err +max rel err +tol used\n)")))
      << run.out;
  // A timed case: its shapes, then the implementation's median, GB/s and speedup with its interval.
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\n  performance/llm\[dtype=float32,rows=1024,cols=4096\]  x: 1024x4096 float32, weight: 4096 float32\n    rmsnorm__rmsnorm_cpp +PASS +[0-9.]+ [mu]s +[0-9.]+ +\S+ +- +[0-9.]+x +\[[0-9.]+, [0-9.]+\] +[0-9.]+e[-+]\d+ +[0-9.]+e[-+]\d+ +[0-9.]+%\n)")))
      << run.out;
  EXPECT_NE(run.out.find("tol used: the largest |a - e| / (atol + rtol |e|)"), std::string::npos);

  const auto results = e2e::read_json(logs / "results.json");
  std::ifstream in(logs / "tests.csv");
  std::string header, line;
  ASSERT_TRUE(std::getline(in, header));
  std::size_t rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, results["tests"].size());
  EXPECT_EQ(header.rfind("op,implementation,case,variant,kind,mode,device,repeat,shapes,verdict,median_s,", 0), 0u) << header;
  // Every PASS with a floating output has its error figures, within its tolerance.
  std::size_t passes = 0;
  for (const auto& t : e2e::tests_of(results, "rmsnorm__rmsnorm_cpp")) {
    if (t["verdict"] != "PASS") continue;
    ++passes;
    ASSERT_TRUE(t.contains("errors")) << t.dump();
    // The output that came closest to its tolerance: y, or a gradient of the backward's (bwd tests).
    if (t["mode"] == "fwd") EXPECT_EQ(t["errors"]["output"], "y") << t.dump();
    else EXPECT_TRUE(t["errors"]["output"] == "grad_x" || t["errors"]["output"] == "grad_weight") << t.dump();
    EXPECT_LE(t["errors"]["tolerance_used"].get<double>(), 1.0) << t.dump();
    EXPECT_GE(t["errors"]["max_abs_error"].get<double>(), 0.0) << t.dump();
    EXPECT_FALSE(t.value("shapes", "").empty()) << t.dump();
  }
  EXPECT_GE(passes, 20u);
}
