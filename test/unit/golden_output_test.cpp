// Golden-output tests: one fixed run, test/fixtures/golden/run.json, through every reporter (the
// console at the default verbosity and with -v, results.jsonl, operator_summary.csv,
// OVERALL_SUMMARY.md and junit.xml), each output compared line by line, in order, with its golden
// file beside run.json, as google/benchmark's output_test does. They pin what every reporter
// writes, so that changing how the reporters are fed or how a run is held provably changes none
// of it.
//
// Updating the golden files: after a deliberate change of a reporter's output, run
//
//   BB_UPDATE_GOLDEN=1 build/bb_unit_tests --gtest_filter='GoldenOutput.*'
//
// Each test then writes its actual output over its golden file in the source tree (not the build
// tree) and passes. Read `git diff test/fixtures/golden` before committing what it wrote: that
// diff is the change of behaviour.
//
// replay() is the one place that turns the RunRecord into a reporter's events, the record growing
// as the session's does: it is the part to change when the events change; nothing else here, and
// no golden file, should have to.
//
// Nothing in these outputs varies between builds: the tool's version and commit that junit.xml
// and OVERALL_SUMMARY.md show are the run's (run.json's provenance), not this build's, and no
// reporter prints the time of day or a path of this machine. So no line is normalised; were one
// ever to need it, normalise() below is where, with a comment saying why.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "console_capture.hpp"
#include "report/report_files.hpp"
#include "report/reporter.hpp"
#include "report/results_stream.hpp"
#include "run_files.hpp"
#include "run_record.hpp"

namespace {

namespace fs = std::filesystem;
using bb::Verdict;
using bb_test::Capture;
using bb_test::FakeClock;

const fs::path kGoldenDir = fs::path(BB_SOURCE_DIR) / "test" / "fixtures" / "golden";

// ---- the run, replayed ---------------------------------------------------------------------

// The run's events, in the order and with the arguments run_session (session.cpp) gives them:
//   run_started; a warning per sandbox wall that is off (the session says so right after
//   run_started; the host record keeps the list); op_planned per op (the unusable ones first,
//   as the record holds them); sweep_planned with every test; device_described per device kind
//   (after the plan, as the session probes them); then every SKIPPED test, in sweep order, before
//   any test runs (the session decides them before the workers start), an implementation that
//   cannot run here at all (its device kind is unavailable, or it runs on none of the op's
//   devices) announced once with impl_skipped before its first one; then each test that ran,
//   test_started and test_finished, one at a time in sweep order; run_finished.
// `elapse` is told the seconds that pass (the plan's and the devices' phases, each test's
// duration), for a fake clock. A test the worker itself reported SKIPPED (judge.cpp) would
// come among the tests that ran; the record cannot tell it apart, and the fixture has none.
// Not replayed, because a RunRecord does not hold them: the log dir (the console's "logs in"
// line) and the session's other warnings (ignored signals, the libraries' copy not kept).
void replay(const bb::RunRecord& run, bb::Reporter& r, const std::function<void(double)>& elapse = {}) {
  auto pass = [&](double seconds) {
    if (elapse && seconds > 0) elapse(seconds);
  };
  bb::RunRecord live;  // the record as the session holds it at each event
  live.command = run.command;
  live.started_at = run.started_at;
  live.host = run.host;
  live.options = run.options;
  live.root = run.root;
  live.shard = run.shard;
  live.repeats = run.repeats;
  live.perf_p = run.perf_p;
  r.run_started(live);
  if (const auto sandbox = run.host.find("sandbox"); sandbox != run.host.end() && sandbox->is_object())
    for (const auto& off : sandbox->value("off", nlohmann::json::array())) r.warning("worker sandbox: off: " + off.get<std::string>());
  for (const auto& op : run.ops) {
    live.ops.push_back(op);
    r.op_planned(op);
  }
  live.provenance = run.provenance;
  live.sweep_id = run.sweep_id;
  pass(run.phases.value("plan_s", 0.0));
  const std::size_t total = run.tests.size();
  r.sweep_planned(live, total);
  for (const auto& d : run.devices) {
    live.devices.push_back(d);
    r.device_described(bb::device_kind_from_json(d));
  }
  pass(run.phases.value("devices_s", 0.0));

  auto kind_unavailable = [&](const std::string& device) {
    if (device.empty()) return true;  // the implementation runs on none of the op's devices
    for (const auto& d : run.devices)
      if (d.value("name", "") == device) return !d.value("available", false);
    return false;
  };
  auto all_skipped = [&](const bb::TestResult& t) {
    for (const auto& u : run.tests)
      if (u.id.op == t.id.op && u.id.impl == t.id.impl && u.outcome.verdict != Verdict::skipped) return false;
    return true;
  };
  std::size_t done = 0;
  std::set<std::string> told;
  for (const auto& t : run.tests) {
    if (t.outcome.verdict != Verdict::skipped) continue;
    if (kind_unavailable(t.id.device) && all_skipped(t) && told.insert(t.id.impl).second) r.impl_skipped(t.id.impl, t.id.device, t.outcome.message);
    r.test_finished(t, ++done, total);
  }
  for (const auto& t : run.tests) {
    if (t.outcome.verdict == Verdict::skipped) continue;
    r.test_started(t);
    pass(t.phases.duration);
    r.test_finished(t, ++done, total);
  }

  r.run_finished(run);  // the whole record: every test in sweep order, scores, exit code
}

// ---- comparing with a golden file ----------------------------------------------------------

bool update_mode() {
  const char* v = std::getenv("BB_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// What legitimately varies between builds, replaced before comparing. Nothing does today (see
// the top of this file): the text is returned as it is.
std::string normalise(std::string text) { return text; }

// A line for a failure message: control characters (escape codes, carriage returns) written out.
std::string visible(const std::string& line) {
  std::string out;
  for (unsigned char c : line) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

// The text's lines, without their '\n' (a '\r' before it stays, and shows in a difference).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// "" when `actual` has the lines of `expected`, in order; otherwise the first difference: its
// line number, the expected line and the actual one, or the first extra or missing line.
std::string first_difference(const std::string& expected, const std::string& actual) {
  const auto want = lines_of(expected), got = lines_of(actual);
  const std::size_t common = std::min(want.size(), got.size());
  for (std::size_t i = 0; i < common; ++i)
    if (want[i] != got[i])
      return fmt::format("first difference at line {}:\n  expected: {}\n  actual:   {}", i + 1, visible(want[i]), visible(got[i]));
  if (got.size() > want.size())
    return fmt::format("{} lines expected, {} written; the first extra line, {}:\n  actual:   {}", want.size(), got.size(), common + 1,
                       visible(got[common]));
  if (want.size() > got.size())
    return fmt::format("{} lines expected, {} written; the first missing line, {}:\n  expected: {}", want.size(), got.size(), common + 1,
                       visible(want[common]));
  const bool want_nl = !expected.empty() && expected.back() == '\n', got_nl = !actual.empty() && actual.back() == '\n';
  if (want_nl != got_nl)
    return fmt::format("the last line, {}, ends with a newline in the {} only", want.size(), want_nl ? "expected text" : "actual text");
  return "";
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares `actual` (what `source` wrote) with the golden file `name`, line by line. In update
// mode (BB_UPDATE_GOLDEN=1) it writes `actual` over the golden file instead, where `may_update`.
void expect_golden(const std::string& name, const std::string& actual_text, const std::string& source, bool may_update = true) {
  const fs::path golden = kGoldenDir / name;
  const std::string actual = normalise(actual_text);
  if (update_mode() && may_update) {
    std::ofstream out(golden, std::ios::binary | std::ios::trunc);
    out << actual;
    out.close();
    ASSERT_TRUE(out) << golden << ": cannot write";
    std::cout << "[ GOLDEN   ] " << golden.string() << ": written from " << source << "\n";
    return;
  }
  if (!fs::exists(golden)) {
    ADD_FAILURE() << golden.string() << ": no such golden file (BB_UPDATE_GOLDEN=1 writes it from " << source << ")";
    return;
  }
  const std::string diff = first_difference(normalise(read_file(golden)), actual);
  if (!diff.empty())
    ADD_FAILURE() << source << " differs from the golden file " << golden.string() << "\n"
                  << diff << "\n(if the change is intended: BB_UPDATE_GOLDEN=1 rewrites the golden files; see the top of "
                  << __FILE__ << ")";
}

// ---- the reporters' outputs ----------------------------------------------------------------

bb::RunRecord golden_run() {
  auto run = bb::load_run(kGoldenDir / "run.json");
  if (!run) {
    ADD_FAILURE() << run.error().message;
    return {};
  }
  return *run;
}

// A folder of its own for a test's files, removed after.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "bb_golden_XXXXXX").string();
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The console as a CI log shows it: not a terminal, no colour, stdout and stderr in one stream
// (warnings and errors go to stderr), the progress line every 5 s of the fake clock.
std::string console_output(const bb::RunRecord& run, bool verbose) {
  Capture out;
  FakeClock clock;
  bb::ConsoleOptions o;
  o.verbose = verbose;
  o.terminal = false;
  o.colour = false;
  o.progress_interval = 5.0;
  o.out = out.file();
  o.err = out.file();
  o.clock = clock.paced_fn();  // the same progress lines on every run
  {
    auto rep = bb::make_console_reporter(o);
    replay(run, *rep, [&](double s) { clock.advance(s); });
  }
  return out.text();
}

std::string jsonl_output(const bb::RunRecord& run, const fs::path& file) {
  {
    auto rep = bb::make_results_stream_writer(file);
    replay(run, *rep);
  }
  return read_file(file);
}

// One report file (its log dir name: operator_summary.csv, OVERALL_SUMMARY.md, junit.xml) as the
// report files' reporter writes it when the run finishes.
std::string report_file_output(const bb::RunRecord& run, const std::string& name) {
  TempDir dir;
  bb::ReportPaths paths;
  const fs::path file = dir.path() / name;
  for (const auto& format : bb::report_formats())
    if (name == format.file_name) paths.push_back({&format, file});
  {
    auto rep = bb::make_report_files_reporter(paths);
    replay(run, *rep);
  }
  EXPECT_TRUE(fs::exists(file)) << file << ": not written";
  return read_file(file);
}

// ---- the tests -----------------------------------------------------------------------------

TEST(GoldenOutput, Console) {
  const auto run = golden_run();
  expect_golden("console.txt", console_output(run, false), "the console reporter (not a terminal, no colour)");
}

TEST(GoldenOutput, ConsoleVerbose) {
  const auto run = golden_run();
  expect_golden("console_verbose.txt", console_output(run, true), "the console reporter with -v (not a terminal, no colour)");
}

TEST(GoldenOutput, Jsonl) {
  const auto run = golden_run();
  TempDir dir;
  expect_golden("results.jsonl", jsonl_output(run, dir.path() / "results.jsonl"), "the results.jsonl reporter");
}

// The report files, as the live run's reporter writes them and as merge and the other commands
// compute them from a loaded RunRecord: the same bytes both ways.
TEST(GoldenOutput, Csv) {
  const auto run = golden_run();
  expect_golden("operator_summary.csv", report_file_output(run, "operator_summary.csv"), "the report files' reporter's operator_summary.csv");
  expect_golden("operator_summary.csv", bb::operator_summary_csv(run), "operator_summary_csv(load_run(run.json))", false);
}

TEST(GoldenOutput, Markdown) {
  const auto run = golden_run();
  expect_golden("OVERALL_SUMMARY.md", report_file_output(run, "OVERALL_SUMMARY.md"), "the report files' reporter's OVERALL_SUMMARY.md");
  expect_golden("OVERALL_SUMMARY.md", bb::overall_summary_md(run), "overall_summary_md(load_run(run.json))", false);
}

TEST(GoldenOutput, Junit) {
  const auto run = golden_run();
  expect_golden("junit.xml", report_file_output(run, "junit.xml"), "the report files' reporter's junit.xml");
  expect_golden("junit.xml", bb::junit_xml(run), "junit_xml(load_run(run.json))", false);
}

// The stream a killed run leaves is read back as the run itself: results.jsonl written by replay,
// read with load_run, is the run that run.json is. What the stream does not carry, and is left
// out of the comparison for that reason:
//   merged_shards   a merged run's shards: `merge` writes results.json, never a stream, and no
//                   event has them (the sweep line does not carry them), so a stream reads back as [].
//   the tests' order  a test's line is written when it finishes, and carries no place in the
//                   sweep: a stream reads back with its tests in the order they finished (every
//                   SKIPPED one first, then as the workers ended them), where results.json has
//                   them in sweep order (the session sorts them before run_finished). The tests
//                   are compared as a set, each by its key (op/impl/case#repeat).
// What it carries otherwise differs only where the reader makes it up, the same way both sides:
//   scores          the run_finished line has them, but load_run recomputes them from the tests
//                   (rescore), as it does for results.json;
//   complete        run_finished's "complete" is "not interrupted": a record that is incomplete
//                   without a signal (read back from a killed run's stream) would read back complete
//                   once streamed again. The fixture is a finished run.
// Events that write no line (test_started, impl_skipped, warning) have nothing to carry that a
// RunRecord holds.
TEST(GoldenOutput, JsonlReadsBackAsTheRun) {
  const auto run = golden_run();
  ASSERT_FALSE(run.tests.empty());
  TempDir dir;
  const fs::path file = dir.path() / "results.jsonl";
  jsonl_output(run, file);
  const auto back = bb::load_run(file);
  ASSERT_TRUE(back) << back.error().message;
  nlohmann::json want = bb::to_json(run), got = bb::to_json(*back);
  want.erase("merged_shards");
  got.erase("merged_shards");
  for (auto* j : {&want, &got}) {
    auto& tests = (*j)["tests"];
    std::stable_sort(tests.begin(), tests.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return bb::test_key(a.get<bb::TestResult>()) < bb::test_key(b.get<bb::TestResult>());
    });
  }
  const std::string diff = first_difference(want.dump(2), got.dump(2));
  EXPECT_TRUE(diff.empty()) << "to_json(load_run(results.jsonl)) differs from to_json(load_run(run.json)) (" << (kGoldenDir / "run.json").string()
                            << "):\n"
                            << diff;
}

}  // namespace
