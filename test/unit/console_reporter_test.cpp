// The console reporter, fed events by hand and writing into memory: what a CI log and a
// terminal get, SKIPPED tests grouped, -q and -v, the progress line on an injected clock.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "console_capture.hpp"
#include "report/reporter.hpp"

namespace {

using bb::Verdict;
using bb_test::Capture;
using bb_test::FakeClock;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_lines(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.find(needle) != std::string::npos;
  return n;
}

// Waits (up to 10 s: the machine may be busy) until `needle` is on `n` lines of `out`.
bool wait_for_lines(Capture& out, const std::string& needle, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count_lines(out.text(), needle) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

bb::TestResult test(const std::string& impl, int i, Verdict v, const std::string& message = "") {
  bb::TestResult r;
  r.id.op = "myop";
  r.id.impl = impl;
  r.id.case_id = "correctness/c" + std::to_string(i);
  r.id.kind = "correctness";
  r.outcome.verdict = v;
  r.outcome.message = message;
  return r;
}

bb::RunRecord summary_of(const std::vector<bb::TestResult>& results, int exit_code) {
  bb::RunRecord s;
  s.tests = results;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : results)
    if (std::find(order.begin(), order.end(), std::pair(r.id.op, r.id.impl)) == order.end()) order.emplace_back(r.id.op, r.id.impl);
  s.scores = bb::compute_scores(results, order, {1.0});
  s.exit_code = exit_code;
  s.wall_time = 65.3;
  return s;
}

// A run of `results`, one after another, through a reporter writing into `out`.
std::string run(bb::ConsoleOptions o, const std::vector<bb::TestResult>& results, int exit_code = 0,
                const std::vector<std::string>& skipped_impls = {}, const std::string& skip_reason = "") {
  Capture out, err;
  o.out = out.file();
  o.err = err.file();
  {
    auto rep = bb::make_console_reporter(o);
    bb::RunRecord info;
    info.root = "/root";
    rep->run_started(info);
    bb::OpReport op;
    op.op = "myop";
    op.reference = "myop_reference";
    op.reference_kind = "library";
    rep->op_planned(op);
    rep->sweep_planned(info, results.size());
    std::size_t done = 0;
    std::string announced;
    for (const auto& r : results) {
      if (std::find(skipped_impls.begin(), skipped_impls.end(), r.id.impl) != skipped_impls.end() && announced != r.id.impl) {
        rep->impl_skipped(r.id.impl, "cuda", skip_reason);
        announced = r.id.impl;
      }
      if (r.outcome.verdict != Verdict::skipped) rep->test_started(r);  // as the session: SKIPPED tests never start
      rep->test_finished(r, ++done, results.size());
    }
    rep->run_finished(summary_of(results, exit_code));
  }
  return out.text();
}

TEST(Console, NotATerminalWritesNoCarriageReturnOrEscapeCode) {
  std::vector<bb::TestResult> results;
  for (int i = 0; i < 5; ++i) results.push_back(test("myop__myop_cpp", i, Verdict::pass));
  results.push_back(test("myop__myop_wrong", 0, Verdict::fail, "output 'y': 3 of 10 elements differ"));
  results.push_back(test("myop__myop_vec", 0, Verdict::skipped, "dtype float16 is not supported"));
  bb::ConsoleOptions o;
  o.verbose = true;
  const std::string text = run(o, results, 1);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL"), std::string::npos) << text;
}

// What a plugin printed and the message it gave reach the console written out: a hostile one
// cannot erase a line (ESC [2K, a carriage return) or start a sequence with a C1 control.
TEST(Console, WhatAPluginPrintedCannotRedrawTheTerminal) {
  auto r = test("myop__myop_evil", 0, Verdict::fail, "bad\r\x1b[2KPASS \xc2\x9b" "31m");
  r.output.text = "progress 50%\x1b[2K\rall good\n";
  r.output.bytes = r.output.text.size();
  const std::string text = run(bb::ConsoleOptions{}, {r}, 1);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_NE(text.find("      bad\\x0d\\x1b[2KPASS \\u009b31m"), std::string::npos) << text;
  EXPECT_NE(text.find("      | progress 50%\\x1b[2K\\x0dall good"), std::string::npos) << text;
}

TEST(Console, AnImplementationWhoseDeviceIsMissingGetsOneLine) {
  std::vector<bb::TestResult> results;
  for (int i = 0; i < 3; ++i) results.push_back(test("myop__myop_cpp", i, Verdict::pass));
  for (int i = 0; i < 100; ++i) results.push_back(test("myop__myop_cuda_naive", i, Verdict::skipped, "no cuda device: no driver"));
  for (int i = 3; i < 6; ++i) results.push_back(test("myop__myop_cpp", i, Verdict::pass));
  const std::string text = run({}, results, 0, {"myop__myop_cuda_naive"}, "no cuda device: no driver");
  EXPECT_EQ(count_lines_starting(text, "SKIPPED "), 1u) << text;
  EXPECT_NE(text.find("SKIPPED myop__myop_cuda_naive: all 100 tests: no cuda device: no driver\n"), std::string::npos) << text;
  EXPECT_LT(lines_of(text).size(), 20u) << text;
  EXPECT_NE(text.find("6 passed, 0 failed, 100 skipped\n"), std::string::npos) << text;
}

TEST(Console, ImplementationsSkippedTogetherAreCountedApart) {
  // The session reports every SKIPPED test first, in sweep order: case by case, not impl by impl.
  Capture out;
  bb::ConsoleOptions o;
  o.out = out.file();
  {
    auto rep = bb::make_console_reporter(o);
    rep->sweep_planned({}, 14);
    rep->impl_skipped("myop__myop_cuda_naive", "cuda", "no CUDA device: cudaGetDeviceCount failed");
    rep->impl_skipped("myop__myop_cuda_vec", "cuda", "no CUDA device: cudaGetDeviceCount failed");
    std::size_t done = 0;
    for (int i = 0; i < 6; ++i) {
      rep->test_finished(test("myop__myop_cuda_naive", i, Verdict::skipped, "no CUDA device"), ++done, 14);
      rep->test_finished(test("myop__myop_cuda_vec", i, Verdict::skipped, "no CUDA device"), ++done, 14);
    }
    EXPECT_EQ(count_lines_starting(out.text(), "SKIPPED "), 0u);  // not yet: more may come
    auto r = test("myop__myop_cpp", 0, Verdict::pass);
    rep->test_started(r);
    EXPECT_EQ(count_lines_starting(out.text(), "SKIPPED "), 2u);  // the first test to run: now
    rep->test_finished(r, ++done, 14);
    rep->test_finished(test("myop__myop_cuda_vec", 6, Verdict::skipped, "no CUDA device"), ++done, 14);  // late: the table counts it
    rep->run_finished(summary_of({}, 0));
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("SKIPPED myop__myop_cuda_naive: all 6 tests: no CUDA device: cudaGetDeviceCount failed\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nSKIPPED myop__myop_cuda_vec: all 6 tests: no CUDA device: cudaGetDeviceCount failed\n"), std::string::npos) << text;
  EXPECT_EQ(count_lines_starting(text, "SKIPPED "), 2u) << text;
}

TEST(Console, OtherSkipReasonsAreGroupedWithACount) {
  std::vector<bb::TestResult> results;
  for (int i = 0; i < 30; ++i)
    results.push_back(test("myop__myop_vec", i, i % 3 == 0 ? Verdict::pass : Verdict::skipped,
                           i % 3 == 1 ? "dtype float16 is not supported" : "dtype float64 is not supported"));
  const std::string text = run({}, results);
  EXPECT_EQ(count_lines_starting(text, "SKIPPED "), 2u) << text;
  EXPECT_NE(text.find("SKIPPED myop__myop_vec: 10 tests: dtype float16 is not supported\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SKIPPED myop__myop_vec: 10 tests: dtype float64 is not supported\n"), std::string::npos) << text;
}

TEST(Console, AFailingTestGetsALineWithItsVerdictAndMessage) {
  std::vector<bb::TestResult> results{test("myop__myop_cpp", 0, Verdict::pass),
                                      test("myop__myop_wrong", 1, Verdict::fail, "output 'y': 3 of 10 elements differ"),
                                      test("myop__myop_crash", 2, Verdict::crash, "SIGSEGV")};
  bb::Mismatch m;
  m.output = "z";
  m.count = 4;
  m.total = 8;
  results[2].outcome.mismatch = m;  // a mismatch the message does not describe gets its own summary
  const std::string text = run({}, results, 1);
  const auto lines = lines_of(text);
  auto at = [&](const std::string& needle) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(needle) != std::string::npos) return static_cast<int>(i);
    return -1;
  };
  const int fail = at("FAIL             myop__myop_wrong correctness/c1");
  ASSERT_GE(fail, 0) << text;
  EXPECT_EQ(lines[fail + 1], "      output 'y': 3 of 10 elements differ") << text;
  const int crash = at("CRASH            myop__myop_crash correctness/c2");
  ASSERT_GE(crash, 0) << text;
  EXPECT_EQ(lines[crash + 1], "      SIGSEGV") << text;
  EXPECT_NE(lines[crash + 2].find("output 'z': 4 of 8 elements differ"), std::string::npos) << text;
  EXPECT_EQ(count_lines(text, "myop__myop_cpp correctness"), 0u) << text;  // a pass gets no line
  EXPECT_NE(text.find("\n1 passed, 2 failed, 0 skipped\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nexit status 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nwall time 1m05s (65.3 s)\n"), std::string::npos) << text;
}

TEST(Console, QuietPrintsOnlyTheTable) {
  std::vector<bb::TestResult> results{test("myop__myop_cpp", 0, Verdict::pass), test("myop__myop_wrong", 1, Verdict::fail, "bad"),
                                      test("myop__myop_vec", 2, Verdict::skipped, "dtype")};
  bb::ConsoleOptions o;
  o.quiet = true;
  o.progress_interval = 0;  // even a due progress line is not printed
  const std::string text = run(o, results, 1);
  const auto lines = lines_of(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("implementation", 0), 0u) << text;
  EXPECT_EQ(text.find("backendbench:"), std::string::npos) << text;
  EXPECT_EQ(text.find("[progress]"), std::string::npos) << text;
  EXPECT_EQ(count_lines_starting(text, "SKIPPED "), 0u) << text;
  EXPECT_EQ(text.find("bad"), std::string::npos) << text;
  EXPECT_NE(text.find("1 passed, 1 failed, 1 skipped\n"), std::string::npos) << text;
}

// The final table says where the tests that ran ran: a ctest test handed GPU 1 by its
// resource group shows it; a CPU-only run has no such line; SKIPPED tests are not counted.
TEST(Console, TheTableSaysWhichDevicesRanTheTests) {
  auto on = [](bb::TestResult r, const std::string& device, int index) {
    r.id.device = device;
    r.id.device_index = index;
    return r;
  };
  std::vector<bb::TestResult> results{on(test("myop__myop_cuda", 0, Verdict::pass), "cuda", 1),
                                      on(test("myop__myop_cuda", 1, Verdict::fail, "bad"), "cuda", 1),
                                      on(test("myop__myop_hip", 2, Verdict::skipped, "no hip device"), "hip", 0),
                                      test("myop__myop_cpp", 3, Verdict::pass)};
  bb::ConsoleOptions o;
  o.quiet = true;
  const std::string text = run(o, results, 1);
  EXPECT_NE(text.find("tests per device: cpu 1, cuda:1 2\n"), std::string::npos) << text;
  const std::string cpu_only = run(o, {test("myop__myop_cpp", 0, Verdict::pass)});
  EXPECT_EQ(cpu_only.find("tests per device"), std::string::npos) << cpu_only;
}

// The final lines say where the time went: the planning phases, then the tests' phases summed.
TEST(Console, TheTableSaysWhereTheTimeWent) {
  Capture out, err;
  bb::ConsoleOptions o;
  o.quiet = true;
  o.out = out.file();
  o.err = err.file();
  {
    auto rep = bb::make_console_reporter(o);
    bb::RunRecord info;
    rep->run_started(info);
    bb::RunRecord s = summary_of({test("myop__myop_cpp", 0, Verdict::pass)}, 0);
    s.measured_time = 6.25;
    s.phases = {{"plan_s", 0.5},
                {"devices_s", 1.0},
                {"tests", {{"setup_s", 2.0}, {"inputs_s", 0.25}, {"reference_s", 0.5}, {"check_s", 1.5}, {"timing_s", 8.0}, {"host_s", 3.0}}}};
    rep->run_finished(s);
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("where the time went, in seconds, plan 0.5, devices 1.0; tests (summed over workers): setup 2.0, inputs 0.2, "
                      "reference 0.5, check 1.5, timing 8.0 (inside timed regions 6.2), host 3.0\n"),
            std::string::npos)
      << text;
}

TEST(Console, VerbosePrintsEveryTestThatRan) {
  std::vector<bb::TestResult> results;
  for (int i = 0; i < 7; ++i) results.push_back(test("myop__myop_cpp", i, Verdict::pass));
  bb::Timing t;
  t.stats.median = 2e-6;
  t.stats.samples = 50;
  t.stop = "converged";
  results[3].performance.timing = t;
  results[3].performance.speedup = 1.5;
  results[3].performance.gbps = 12.0;
  for (int i = 0; i < 4; ++i) results.push_back(test("myop__myop_vec", i, Verdict::skipped, "dtype float16 is not supported"));
  bb::ConsoleOptions o;
  o.verbose = true;
  const std::string text = run(o, results);
  for (std::size_t i = 1; i <= 7; ++i)
    EXPECT_EQ(count_lines(text, fmt::format("[{}/{}] ", i, results.size())), 1u) << i << "\n" << text;
  // SKIPPED tests stay grouped by reason with -v: one line, not one per test.
  for (std::size_t i = 8; i <= results.size(); ++i)
    EXPECT_EQ(count_lines(text, fmt::format("[{}/{}] ", i, results.size())), 0u) << i << "\n" << text;
  EXPECT_EQ(count_lines_starting(text, "SKIPPED "), 1u) << text;
  EXPECT_NE(text.find("SKIPPED myop__myop_vec: 4 tests: dtype float16 is not supported\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS             myop__myop_cpp correctness/c3  2.00 us"), std::string::npos) << text;
  EXPECT_NE(text.find("1.50x  12.0 GB/s"), std::string::npos) << text;
  // Without -v, a timed pass gets no line either.
  const std::string plain = run({}, results);
  EXPECT_EQ(plain.find("myop__myop_cpp correctness"), std::string::npos) << plain;
}

TEST(Console, AProgressLineEveryIntervalAlsoWhileOneTestRuns) {
  FakeClock clock;
  Capture out;
  bb::ConsoleOptions o;
  o.out = out.file();
  o.clock = clock.fn();
  o.progress_interval = 5;
  {
    auto rep = bb::make_console_reporter(o);
    rep->run_started({});
    rep->sweep_planned({}, 10);
    for (int i = 0; i < 3; ++i) {
      auto r = test("myop__myop_cpp", i, Verdict::pass);
      rep->test_started(r);
      clock.advance(1);
      rep->test_finished(r, i + 1, 10);
    }
    auto slow = test("myop__myop_cpp", 9, Verdict::pass);
    slow.id.case_id = "performance/large[n=4096]";
    rep->test_started(slow);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(count_lines(out.text(), "[progress]"), 0u) << out.text();  // 3 s: not due
    clock.advance(3);  // 6 s since the sweep began; the ticker prints while the test runs
    EXPECT_TRUE(wait_for_lines(out, "[progress]", 1)) << out.text();
    EXPECT_NE(out.text().find("[progress] 3/10 done  pass 3  fail 0  skip 0  elapsed 6s  eta 14s  running myop__myop_cpp "
                              "performance/large[n=4096]\n"),
              std::string::npos)
        << out.text();
    clock.advance(2);  // 2 s since the last one: none
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(count_lines(out.text(), "[progress]"), 1u) << out.text();
    clock.advance(3);
    EXPECT_TRUE(wait_for_lines(out, "[progress]", 2)) << out.text();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(count_lines(out.text(), "[progress]"), 2u) << out.text();
    rep->run_finished(summary_of({}, 0));
  }
  EXPECT_EQ(out.text().find('\r'), std::string::npos);
}

TEST(Console, TheEtaWaitsForAFewTests) {
  FakeClock clock;
  Capture out;
  bb::ConsoleOptions o;
  o.out = out.file();
  o.clock = clock.fn();
  o.progress_interval = 1;
  auto rep = bb::make_console_reporter(o);
  rep->sweep_planned({}, 100);
  clock.advance(2);
  rep->test_finished(test("myop__myop_cpp", 0, Verdict::pass), 1, 100);
  EXPECT_NE(out.text().find("eta -\n"), std::string::npos) << out.text();
  rep->run_finished(summary_of({}, 0));
}

TEST(Console, ATerminalGetsOneStatusLineRewrittenInPlace) {
  FakeClock clock;
  Capture out;
  bb::ConsoleOptions o;
  o.terminal = true;
  o.out = out.file();
  o.clock = clock.fn();
  o.width = 70;
  {
    auto rep = bb::make_console_reporter(o);
    rep->run_started({});
    rep->sweep_planned({}, 4);
    for (int i = 0; i < 3; ++i) {
      auto r = test("myop__myop_cpp", i, Verdict::pass);
      rep->test_started(r);
      clock.advance(1);
      rep->test_finished(r, i + 1, 4);
    }
    auto bad = test("myop__myop_wrong", 3, Verdict::fail, "wrong values");
    rep->test_started(bad);  // within 0.1 s of the last redraw: the ticker draws it a little later
    clock.advance(1);
    EXPECT_TRUE(wait_for_lines(out, "running", 1));
    EXPECT_NE(out.text().find("\r\x1b[K[3/4]  pass 3  fail 0  skip 0  elapsed 4s  eta 1s  running myop__myop"), std::string::npos) << out.text();
    rep->test_finished(bad, 4, 4);
    rep->run_finished(summary_of({}, 1));
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("\r\x1b[K[0/4]  pass 0  fail 0  skip 0  elapsed 0s  eta -"), std::string::npos) << text;
  EXPECT_NE(text.find("\r\x1b[K[3/4]  pass 3  fail 0  skip 0  elapsed 3s  eta 1s"), std::string::npos) << text;
  // The failure's line goes above the status line, its verdict in red.
  EXPECT_NE(text.find("\r\x1b[K[4/4] \x1b[31mFAIL\x1b[0m             myop__myop_wrong correctness/c3\n      wrong values\n"),
            std::string::npos)
      << text;
  // No status line is wider than the terminal.
  std::size_t pos = 0, status_lines = 0, truncated = 0;
  while ((pos = text.find("\r\x1b[K", pos)) != std::string::npos) {
    pos += 4;
    const std::size_t end = std::min(text.find_first_of("\r\n", pos), text.size());
    if (text.compare(pos, 1, "[") != 0 || text.find("  pass ", pos) >= end) continue;
    ++status_lines;
    EXPECT_LT(end - pos, 70u) << text.substr(pos, end - pos);
    truncated += end - pos == 69;  // the ones naming a running test are cut to fit
  }
  EXPECT_GE(status_lines, 5u);
  EXPECT_GE(truncated, 1u);
  EXPECT_NE(text.find("\n0 passed, 0 failed, 0 skipped\n"), std::string::npos);  // the table, the status line gone
}

}  // namespace

TEST(Console, NoColourKeepsTheStatusLineAndDropsTheColours) {
  std::vector<bb::TestResult> results{test("myop__myop_cpp", 0, Verdict::pass), test("myop__myop_wrong", 1, Verdict::fail, "wrong values")};
  bb::ConsoleOptions o;
  o.terminal = true;
  o.width = 120;
  o.colour = false;  // NO_COLOR
  const std::string text = run(o, results, 1);
  EXPECT_EQ(text.find("\x1b[31m"), std::string::npos) << text;
  EXPECT_EQ(text.find("\x1b[32m"), std::string::npos) << text;
  EXPECT_NE(text.find("\r\x1b[K"), std::string::npos) << text;  // the status line is still rewritten in place
  EXPECT_NE(text.find("FAIL             myop__myop_wrong correctness/c1\n"), std::string::npos) << text;
  o.colour = true;
  EXPECT_NE(run(o, results, 1).find("\x1b[31mFAIL\x1b[0m"), std::string::npos);
}

TEST(Console, TheTableKeepsItsColumnsForLongNames) {
  const std::string long_name = "linear_gelu__linear_gelu_cuda_fused_bias_epilogue_v7";  // 52 characters
  std::vector<bb::TestResult> results{test("myop__myop_cpp", 0, Verdict::pass), test(long_name, 1, Verdict::pass)};
  const std::string text = run({}, results);
  const auto lines = lines_of(text);
  std::size_t header = 0, short_row = 0, long_row = 0;
  for (const auto& l : lines) {
    if (l.rfind("implementation ", 0) == 0) header = l.find("pass");
    if (l.rfind("myop__myop_cpp ", 0) == 0) short_row = l.find(" 1 ");
    if (l.rfind(long_name + " ", 0) == 0) long_row = l.find(" 1 ", long_name.size());
  }
  ASSERT_GT(header, long_name.size()) << text;
  // "pass" is right-aligned in a column of 6: its last letter and each row's count line up.
  EXPECT_EQ(short_row + 1, header + 3) << text;
  EXPECT_EQ(long_row + 1, header + 3) << text;
}

// Failures: the first five of an implementation get a line each as they come; all of them are
// summarised at the end, grouped by implementation, verdict and message shape.
TEST(Console, FailuresAreGroupedByImplementationAtTheEnd) {
  std::vector<bb::TestResult> results;
  for (int i = 0; i < 40; ++i)
    results.push_back(test("myop__myop_wrong", i, Verdict::fail, fmt::format("output 'y': {} of {} elements differ", i + 1, 100 + i)));
  results.push_back(test("myop__myop_crash", 40, Verdict::crash, "killed by signal SIGSEGV"));
  results.push_back(test("myop__myop_cpp", 41, Verdict::pass));
  const std::string text = run({}, results, 1);
  EXPECT_EQ(count_lines(text, "FAIL             myop__myop_wrong"), 5u) << text;
  EXPECT_NE(text.find("      ... more of myop__myop_wrong's tests did not pass: they are summarised at the end\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nnot passed, by implementation:\n"
                      "  myop__myop_wrong: 40 of 40 tests (FAIL 40)\n"
                      "    FAIL x40: output 'y': 1 of 100 elements differ\n"
                      "      correctness/c0, correctness/c1, correctness/c2 and 37 more\n"
                      "  myop__myop_crash: 1 of 1 test (CRASH 1)\n"
                      "    CRASH x1: killed by signal SIGSEGV\n"
                      "      correctness/c40\n"),
            std::string::npos) << text;
}

// The summary line: no correctness rate without a test that ran, no speedup or perf@p when
// nothing was timed, and the libraries that could not be used counted.
TEST(Console, TheSummaryLineSaysOnlyWhatApplies) {
  Capture out, err;
  bb::ConsoleOptions o;
  o.out = out.file();
  o.err = err.file();
  {
    auto rep = bb::make_console_reporter(o);
    bb::RunRecord info;
    info.options = {{"performance", false}};
    rep->run_started(info);
    bb::OpReport op;
    op.op = "myop";
    op.errors = {"myop_broken.so: missing symbol", "myop_other.so: crashed while loading"};
    rep->op_planned(op);
    rep->sweep_planned(info, 1);
    const auto r = test("myop__myop_cpp", 0, Verdict::pass);
    rep->test_started(r);
    rep->test_finished(r, 1, 1);
    rep->run_finished(summary_of({r}, 2));
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("tests 1  passed 1  failed 0  skipped 0  unusable 2 (libraries or manifests: the errors above)  correctness 100.0%\n"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("perf@"), std::string::npos) << text;
  EXPECT_EQ(text.find("geomean speedup"), std::string::npos) << text;
}
