// The report files of a run, from RunRecords built by hand: junit.xml validated against the
// JUnit schema with xmllint, operator_summary.csv parsed back, OVERALL_SUMMARY.md's size for a
// huge run, report.html's escaping and its charts.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/case_table.hpp"
#include "report/report_files.hpp"
#include "report/report_text.hpp"
#include "run_record.hpp"

namespace {

namespace fs = std::filesystem;
using bb::RunRecord;
using bb::TestResult;
using bb::Verdict;

const std::string kHostile = "bad <&>\"' \x01 bell\x07 caf\xc3\xa9 \xe2\x9c\x93 \xff\xfe invalid <script>alert(1)</script> |pipe| *star* `tick`";

TestResult test(const std::string& op, const std::string& impl, const std::string& case_id, Verdict v, std::string message = "") {
  TestResult r;
  r.id.op = op;
  r.id.impl = impl;
  r.id.case_id = case_id;
  r.id.kind = case_id.rfind("performance", 0) == 0 ? "performance" : "correctness";
  r.outcome.verdict = v;
  r.outcome.message = std::move(message);
  r.phases.duration = 0.25;
  return r;
}

void timed(TestResult& r, double median, double baseline) {
  bb::Timing t;
  t.stats.samples = 120;
  t.stats.median = median;
  t.stats.q1 = median * 0.95;
  t.stats.q3 = median * 1.08;
  t.stats.iqr = t.stats.q3 - t.stats.q1;
  t.stats.min = median * 0.9;
  t.stats.max = median * 1.4;
  t.stats.mean = median * 1.01;
  t.stats.rel_stdev = 0.012;
  t.stop = "converged";
  r.performance.timing = t;
  r.performance.baseline_median = baseline;
  r.performance.speedup = baseline / median;
  r.performance.gbps = 800;
  r.performance.peak_pct = 62.5;
}

// A run with every verdict, hostile messages, a repeat, a skipped CUDA implementation and a
// second op. Speedups: scale__good 2x and 8x (geomean 4x), scale__slow 0.5x, and scale__wrong has
// a timed 3x pass beside its failure, which must count nowhere.
RunRecord every_verdict_run() {
  RunRecord run;
  run.command = "backendbench --custom-ops-root ops";
  run.started_at = "2026-01-02T03:04:05Z";
  run.finished_at = "2026-01-02T03:05:05Z";
  run.host = {{"hostname", "node<1>"}, {"os", "Linux"}};
  run.provenance = {{"tool", {{"name", "backendbench"}, {"version", "0.1.0"}, {"commit", "abc123"}}}};
  run.sweep_id = "sweep-42";
  run.repeats = 2;
  run.wall_time = 61.5;
  bb::OpReport scale;
  scale.op = "scale";
  scale.seed = 7;
  scale.reference = "scale_reference";
  scale.reference_kind = "library";
  scale.baseline = "scale_reference (cpu)";
  scale.impls = {"scale__good",      "scale__slow",   "scale__wrong",    "scale__error",  "scale__crash",   "scale__timeout",
                 "scale__unwritten", "scale__mutate", "scale__overflow", "scale__nondet", "scale__cuda"};
  bb::OpReport rms;
  rms.op = "rms";
  rms.seed = 9;
  rms.reference = "rms_reference";
  rms.impls = {"rms__a"};
  run.ops = {scale, rms};

  auto& t = run.tests;
  t.push_back(test("scale", "scale__good", "correctness/small[n=16]", Verdict::pass));
  t.push_back(test("scale", "scale__good", "performance/big", Verdict::pass));
  timed(t.back(), 1e-5, 2e-5);
  t.push_back(test("scale", "scale__good", "performance/huge", Verdict::pass));
  timed(t.back(), 1e-4, 8e-4);
  t.push_back(test("scale", "scale__good", "performance/huge", Verdict::pass));  // the second pass
  t.back().id.repeat = 1;
  t.push_back(test("scale", "scale__slow", "performance/big", Verdict::pass));
  timed(t.back(), 4e-5, 2e-5);
  t.push_back(test("scale", "scale__wrong", "performance/big", Verdict::pass));
  timed(t.back(), 1e-5, 3e-5);
  t.push_back(test("scale", "scale__wrong", "correctness/small[n=16]", Verdict::fail, "output 'y': 2 of 16 elements differ " + kHostile));
  bb::Mismatch m;
  m.output = "y";
  m.count = 2;
  m.total = 16;
  m.max_abs_error = 0.0263;
  m.max_rel_error = 0.01;
  m.first_index = "[0]";
  m.actual = 2.659;
  m.expected = 2.633;
  m.atol = 1e-5;
  m.rtol = 1.3e-6;
  t.back().outcome.mismatch = m;
  t.push_back(test("scale", "scale__error", "correctness/small[n=16]", Verdict::error, std::string(100000, 'x') + " the end"));
  t.push_back(test("scale", "scale__crash", "correctness/small[n=16]", Verdict::crash, "killed by signal SIGSEGV\nsecond line " + kHostile));
  t.push_back(test("scale", "scale__timeout", "correctness/small[n=16]", Verdict::timeout, "no result after 60.0 s"));
  t.push_back(test("scale", "scale__unwritten", "correctness/small[n=16]", Verdict::unwritten, "8 of 16 left unwritten"));
  t.push_back(test("scale", "scale__mutate", "correctness/small[n=16]", Verdict::input_mutated, "input 'x' changed"));
  t.push_back(test("scale", "scale__overflow", "correctness/small[n=16]", Verdict::out_of_bounds, "wrote past the end"));
  t.push_back(test("scale", "scale__nondet", "correctness/small[n=16]", Verdict::nondeterministic, "two calls differ"));
  for (const char* c : {"correctness/small[n=16]", "correctness/small[n=1000]", "performance/big"}) {
    t.push_back(test("scale", "scale__cuda", c, Verdict::skipped, "device cuda not available: no driver"));
    t.back().id.device = "cuda";
    t.back().phases.duration = 0;
  }
  t.push_back(test("rms", "rms__a", "correctness/small", Verdict::pass));
  t.push_back(test("rms", "rms__a", "performance/big", Verdict::skipped, "dtype bfloat16 not supported " + kHostile));
  bb::rescore(run);
  return run;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path temp_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / "bb_reports_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The schema, beside this file's folder: test/fixtures/junit/junit.xsd.
const fs::path kSchema = fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "junit" / "junit.xsd";

bool have(const char* program) {
  return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

// The value of attribute `name` in the first element `element` of `xml`.
std::string attribute(const std::string& xml, const std::string& element, const std::string& name) {
  std::smatch m;
  const std::regex re("<" + element + "\\b[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(xml, m, re) ? m[1].str() : "";
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------
// junit.xml

TEST(JunitReport, ValidatesAgainstTheSchemaAndCountsEveryVerdict) {
  const RunRecord run = every_verdict_run();
  const auto dir = temp_dir("junit");
  const auto file = dir / "junit.xml";
  ASSERT_TRUE(bb::write_reports(run, {{&bb::report_formats()[1], file}}));
  const std::string xml = read(file);

  // Counts: 6 PASS (+ 1 rms), FAIL/UNWRITTEN/INPUT_MUTATED/OUT_OF_BOUNDS/NONDETERMINISTIC are
  // failures, ERROR/CRASH/TIMEOUT errors, 4 SKIPPED.
  EXPECT_EQ(attribute(xml, "testsuites", "tests"), std::to_string(run.tests.size()));
  EXPECT_EQ(attribute(xml, "testsuites", "failures"), "5");
  EXPECT_EQ(attribute(xml, "testsuites", "errors"), "3");
  EXPECT_EQ(attribute(xml, "testsuites", "skipped"), "4");
  EXPECT_EQ(attribute(xml, "testsuites", "time"), "61.500000");
  EXPECT_EQ(count(xml, "<testcase "), run.tests.size());
  EXPECT_EQ(count(xml, "<failure "), 5u);
  EXPECT_EQ(count(xml, "<error "), 3u);
  EXPECT_EQ(count(xml, "<skipped "), 4u);
  EXPECT_EQ(count(xml, "<testsuite "), 12u);  // one per implementation
  for (const char* type : {"FAIL", "UNWRITTEN", "INPUT_MUTATED", "OUT_OF_BOUNDS", "NONDETERMINISTIC"})
    EXPECT_TRUE(std::regex_search(xml, std::regex(std::string("<failure message=\"[^\"]*\" type=\"") + type + "\""))) << type;
  for (const char* type : {"ERROR", "CRASH", "TIMEOUT"})
    EXPECT_TRUE(std::regex_search(xml, std::regex(std::string("<error message=\"[^\"]*\" type=\"") + type + "\""))) << type;

  // Names: classname op.impl, the repeat and the device in the name; properties; timing.
  EXPECT_NE(xml.find("name=\"performance/huge#1 (cpu)\" classname=\"scale.scale__good\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"correctness/small[n=16] (cuda)\" classname=\"scale.scale__cuda\""), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"sweep_id\" value=\"sweep-42\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"seed\" value=\"7\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"tool_commit\" value=\"abc123\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"host\" value=\"node&lt;1&gt;\"/>"), std::string::npos);
  EXPECT_NE(xml.find("speedup: 2.000x"), std::string::npos);
  EXPECT_NE(xml.find("max abs error: 0.0263"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"device cuda not available: no driver\"/>"), std::string::npos);

  // Hostile text: escaped, the control characters written out, invalid UTF-8 replaced.
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x07'), std::string::npos);
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  EXPECT_NE(xml.find("bad &lt;&amp;&gt;&quot;&apos; \\x01 bell\\x07 caf\xc3\xa9"), std::string::npos);
  EXPECT_NE(xml.find("more bytes)"), std::string::npos);  // the 100 kB message was cut

  if (!have("xmllint")) GTEST_SKIP() << "xmllint (libxml2-utils) is not installed: the schema check did not run";
  const fs::path xsd = kSchema;
  ASSERT_TRUE(fs::exists(xsd)) << xsd;
  const std::string cmd = "xmllint --noout --schema '" + xsd.string() + "' '" + file.string() + "' > '" + (dir / "xmllint.log").string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read(dir / "xmllint.log");
}

TEST(JunitReport, SchemaRejectsWhatJenkinsWouldNot) {
  // The schema is a real check: a count that is not a number, a time with an exponent, or a
  // testcase without a name fails it.
  if (!have("xmllint")) GTEST_SKIP() << "xmllint (libxml2-utils) is not installed";
  const auto dir = temp_dir("junit_bad");
  const fs::path xsd = kSchema;
  for (const std::string& bad : {std::string("<testsuites tests=\"x\"/>"),
                                 std::string("<testsuites><testsuite name=\"a\" tests=\"1\" time=\"1e-05\"/></testsuites>"),
                                 std::string("<testsuites><testsuite name=\"a\" tests=\"1\"><testcase classname=\"c\"/></testsuite></testsuites>")}) {
    std::ofstream(dir / "bad.xml") << bad;
    const std::string cmd = "xmllint --noout --schema '" + xsd.string() + "' '" + (dir / "bad.xml").string() + "' >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << bad;
  }
}

TEST(JunitReport, EmptyRunAndUnusableOp) {
  RunRecord run;
  bb::OpReport op;
  op.op = "broken";
  op.errors = {"gen_input.yaml:3: unknown initialiser 'randn2'"};
  run.ops = {op};
  bb::rescore(run);
  const std::string xml = bb::junit_xml(run);
  EXPECT_EQ(attribute(xml, "testsuites", "tests"), "1");
  EXPECT_EQ(attribute(xml, "testsuites", "errors"), "1");
  EXPECT_NE(xml.find("type=\"UNUSABLE\""), std::string::npos);
  EXPECT_NE(xml.find("unknown initialiser &apos;randn2&apos;"), std::string::npos);
  EXPECT_EQ(attribute(bb::junit_xml(RunRecord{}), "testsuites", "tests"), "0");
}

// ---------------------------------------------------------------------------------------------
// operator_summary.csv

// RFC 4180: quoted fields, doubled quotes, CRLF.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') rows.back().push_back(cell), cell.clear();
    else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(cell), cell.clear();
      rows.emplace_back();
      ++i;
    } else cell += c;
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(CsvReport, BackendBenchColumnsThenOursOneRowPerOpAndImplementation) {
  RunRecord run = every_verdict_run();
  run.ops[1].baseline = "rms \"fast\", v2";  // needs quoting
  const auto rows = parse_csv(bb::operator_summary_csv(run));
  ASSERT_GE(rows.size(), 2u);
  const std::vector<std::string> first = {"operator",        "total_tests",     "passed_tests",       "failed_tests",      "correctness_rate",
                                          "avg_speedup",     "geomean_speedup", "max_absolute_error", "max_relative_error", "level"};
  ASSERT_GE(rows[0].size(), first.size());
  EXPECT_EQ(std::vector<std::string>(rows[0].begin(), rows[0].begin() + first.size()), first);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  for (const char* c : {"implementation", "status", "implementations", "correct_implementations", "skipped_tests", "perf@1", "baseline",
                        "reference", "devices"})
    EXPECT_TRUE(col.count(c)) << c;
  for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());

  // 2 op rows first, then 12 implementation rows.
  ASSERT_EQ(rows.size(), 1u + 2 + 12);
  const auto& scale = rows[1];
  EXPECT_EQ(scale[col["operator"]], "scale");
  EXPECT_EQ(scale[col["level"]], "operator");
  EXPECT_EQ(scale[col["total_tests"]], "14");  // 6 passes + 8 failures; 3 SKIPPED apart
  EXPECT_EQ(scale[col["passed_tests"]], "6");
  EXPECT_EQ(scale[col["failed_tests"]], "8");
  EXPECT_EQ(scale[col["skipped_tests"]], "3");
  EXPECT_NEAR(std::stod(scale[col["correctness_rate"]]), 6.0 / 14, 1e-6);
  // Fully correct: good (4x) and slow (0.5x); wrong's 3x pass counts nowhere.
  EXPECT_NEAR(std::stod(scale[col["geomean_speedup"]]), std::sqrt(4.0 * 0.5), 1e-6);
  EXPECT_NEAR(std::stod(scale[col["avg_speedup"]]), (4.0 + 0.5) / 2, 1e-6);
  EXPECT_NEAR(std::stod(scale[col["max_absolute_error"]]), 0.0263, 1e-9);
  EXPECT_NEAR(std::stod(scale[col["max_relative_error"]]), 0.01, 1e-9);
  EXPECT_EQ(scale[col["implementations"]], "10");  // cuda skipped entirely
  EXPECT_EQ(scale[col["correct_implementations"]], "2");
  EXPECT_NEAR(std::stod(scale[col["perf@1"]]), 1.0 / 10, 1e-6);
  EXPECT_EQ(scale[col["status"]], "failed");
  EXPECT_EQ(rows[2][col["operator"]], "rms");
  EXPECT_EQ(rows[2][col["baseline"]], "rms \"fast\", v2");
  EXPECT_EQ(rows[2][col["max_absolute_error"]], "");

  std::map<std::string, std::vector<std::string>> impl;
  for (std::size_t i = 3; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][col["level"]], "implementation");
    impl[rows[i][col["implementation"]]] = rows[i];
  }
  EXPECT_NEAR(std::stod(impl["scale__good"][col["geomean_speedup"]]), 4.0, 1e-6);
  EXPECT_NEAR(std::stod(impl["scale__good"][col["avg_speedup"]]), 5.0, 1e-6);  // (2 + 8) / 2
  EXPECT_EQ(impl["scale__good"][col["perf@1"]], "1");
  EXPECT_EQ(impl["scale__good"][col["total_tests"]], "4");
  EXPECT_EQ(impl["scale__slow"][col["perf@1"]], "0");
  // A failed implementation has no speedup: never 1.0, never its passing case's 3x.
  EXPECT_EQ(impl["scale__wrong"][col["status"]], "failed");
  EXPECT_EQ(impl["scale__wrong"][col["geomean_speedup"]], "");
  EXPECT_EQ(impl["scale__wrong"][col["avg_speedup"]], "");
  EXPECT_EQ(impl["scale__wrong"][col["perf@1"]], "0");
  EXPECT_EQ(impl["scale__crash"][col["verdicts"]], "CRASH=1");
  EXPECT_EQ(impl["scale__cuda"][col["status"]], "skipped");
  EXPECT_EQ(impl["scale__cuda"][col["perf@1"]], "");
  EXPECT_EQ(impl["scale__cuda"][col["implementations"]], "0");
}

// ---------------------------------------------------------------------------------------------
// OVERALL_SUMMARY.md

TEST(MarkdownReport, VerdictTablesFailuresSkipsAndProvenance) {
  const std::string md = bb::overall_summary_md(every_verdict_run());
  EXPECT_EQ(md.rfind("# ❌ BackendBench: 8 of 19 tests failing\n", 0), 0u) << md.substr(0, 200);
  EXPECT_NE(md.find("| scale | 10 | 2 | 1.41x |"), std::string::npos);
  EXPECT_NE(md.find("| **CRASH** | scale\\_\\_crash |"), std::string::npos);
  // The missing device is one line for its three tests.
  EXPECT_EQ(count(md, "device cuda not available"), 1u);
  EXPECT_NE(md.find("- 3 tests: device cuda not available: no driver: scale\\_\\_cuda (3)"), std::string::npos);
  EXPECT_NE(md.find("| perf@1 | 9.1% |"), std::string::npos);
  EXPECT_NE(md.find("<details><summary>Provenance</summary>"), std::string::npos);
  EXPECT_NE(md.find("\"commit\": \"abc123\""), std::string::npos);
  // Hostile text cannot open tags or table cells.
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(md.find('\x01'), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(md.find("\\|pipe\\|"), std::string::npos);
}

TEST(MarkdownReport, StaysSmallForAHundredThousandFailingTests) {
  RunRecord run;
  bb::OpReport op;
  op.op = "big";
  for (int i = 0; i < 200; ++i) op.impls.push_back("big__impl" + std::to_string(i));
  run.ops = {op};
  for (int i = 0; i < 100000; ++i) {
    auto t = test("big", op.impls[i % 200], "correctness/case" + std::to_string(i), i % 3 ? Verdict::fail : Verdict::crash,
                  "output 'y': " + std::string(300, 'e') + " differ");
    run.tests.push_back(t);
  }
  bb::rescore(run);
  const std::string md = bb::overall_summary_md(run);
  EXPECT_LT(md.size(), 60u * 1024) << md.size();
  EXPECT_EQ(md.rfind("# ❌ BackendBench: 100000 of 100000 tests failing", 0), 0u);
  EXPECT_NE(md.find("…and 99950 more failing tests"), std::string::npos);
  EXPECT_NE(md.find("…and 100 more implementations"), std::string::npos);
}

TEST(MarkdownReport, AllPassedAndEmpty) {
  RunRecord run;
  run.ops.push_back({});
  run.ops[0].op = "o";
  run.ops[0].impls = {"o__a"};
  run.tests.push_back(test("o", "o__a", "c", Verdict::pass));
  bb::rescore(run);
  EXPECT_EQ(bb::overall_summary_md(run).rfind("# ✅ BackendBench: all 1 test passed", 0), 0u);
  EXPECT_EQ(bb::overall_summary_md(RunRecord{}).rfind("# BackendBench: no tests ran", 0), 0u);
}

// ---------------------------------------------------------------------------------------------
// report.html

TEST(HtmlReport, SelfContainedEscapedFailuresFirst) {
  const std::string html = bb::html_report(every_verdict_run());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // Nothing fetched: no external resource of any kind.
  for (const char* bad : {"http://", "https://", "<link", "src=", "@import", "url("}) {
    if (std::string(bad) == "http://") {
      // The SVG namespace is a name, not a fetch.
      std::string stripped = html;
      for (std::size_t at; (at = stripped.find("http://www.w3.org/2000/svg")) != std::string::npos;) stripped.erase(at, 26);
      EXPECT_EQ(stripped.find(bad), std::string::npos) << bad;
    } else {
      EXPECT_EQ(html.find(bad), std::string::npos) << bad;
    }
  }
  // Hostile text escaped: only the report's own script tag.
  EXPECT_EQ(count(html, "<script>"), 1u);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  EXPECT_NE(html.find("bad &lt;&amp;&gt;&quot;&#39; \\x01"), std::string::npos);
  // Sections in order: failures before the charts and the list of every test.
  const auto failures = html.find("id=\"failures\""), speedup = html.find("id=\"speedup-chart\""), all = html.find("id=\"all-tests\"");
  ASSERT_NE(failures, std::string::npos);
  ASSERT_NE(speedup, std::string::npos);
  EXPECT_LT(failures, speedup);
  EXPECT_LT(speedup, all);
  EXPECT_LT(html.find("scale__crash"), speedup);
  EXPECT_NE(html.find("id=\"bandwidth-chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"timing-chart\""), std::string::npos);
  EXPECT_NE(html.find("max abs error <b>0.0263</b>"), std::string::npos);
  // Speedup bars: good 4x and slow 0.5x; the failed implementation is drawn as failed, no bar.
  EXPECT_NE(html.find("<title>scale__good: 4.00x</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>scale__slow: 0.50x</title>"), std::string::npos);
  EXPECT_EQ(html.find("<title>scale__wrong:"), std::string::npos);
  EXPECT_NE(html.find("✗ failed (FAIL=1)"), std::string::npos);
  // The skipped device: one entry.
  EXPECT_EQ(count(html, "device cuda not available: no driver</li>") + count(html, "device cuda not available: no driver<br>"), 1u);
}

TEST(HtmlReport, ZeroTestsAndTenThousand) {
  const std::string empty = bb::html_report(RunRecord{});
  EXPECT_NE(empty.find("no tests ran"), std::string::npos);
  EXPECT_NE(empty.find("</html>"), std::string::npos);

  RunRecord run;
  bb::OpReport op;
  op.op = "big";
  for (int i = 0; i < 150; ++i) op.impls.push_back("big__impl" + std::to_string(i));
  run.ops = {op};
  for (int i = 0; i < 10000; ++i) {
    // Each failure's message its own words (numbers alone would group them: like failures are one row).
    std::string words = "msg ";
    for (int k = i; k > 0; k /= 26) words += static_cast<char>('a' + k % 26);
    auto t = test("big", op.impls[i % 150], "performance/case" + std::to_string(i), i % 10 ? Verdict::pass : Verdict::fail, words);
    if (t.outcome.verdict == Verdict::pass) timed(t, 1e-5 * (1 + i % 7), 2e-5);
    run.tests.push_back(t);
  }
  bb::rescore(run);
  const std::string html = bb::html_report(run);
  EXPECT_LT(html.size(), 4u * 1024 * 1024) << html.size();
  EXPECT_NE(html.find("…and 500 more groups of failing tests"), std::string::npos);
  EXPECT_NE(html.find("The first 2000 of 10000 tests are listed"), std::string::npos);
  EXPECT_NE(html.find("The first 100 of 150 implementations are drawn"), std::string::npos);
}

// A run where most tests were skipped is not "all passed"; one compared with an earlier run
// lists its regressions.
TEST(HtmlReport, TheHeadlineCountsTheSkippedAndTheComparisonListsRegressions) {
  RunRecord run;
  bb::OpReport op;
  op.op = "myop";
  op.impls = {"myop__myop_cpp", "myop__myop_cuda"};
  run.ops = {op};
  for (int i = 0; i < 3; ++i) run.tests.push_back(test("myop", "myop__myop_cpp", "correctness/c" + std::to_string(i), Verdict::pass, ""));
  for (int i = 0; i < 10; ++i)
    run.tests.push_back(test("myop", "myop__myop_cuda", "correctness/c" + std::to_string(i), Verdict::skipped, "no cuda device"));
  bb::rescore(run);
  const std::string html = bb::html_report(run);
  EXPECT_EQ(html.find("all 3 tests passed"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"verdict\">3 tests passed, 10 skipped</span>"), std::string::npos);
  EXPECT_NE(html.find("<header class=\"none\">"), std::string::npos);  // not green: most did not run

  bb::RunComparison c;
  bb::Change slower;
  slower.kind = bb::ChangeKind::slower;
  slower.regression = true;
  slower.op = "myop";
  slower.impl = "myop__myop_cpp";
  slower.key = "myop/myop__myop_cpp/performance/large";
  slower.relative = 0.4;
  slower.note = "its library changed";
  c.changes = {slower};
  const bb::ReportComparison rc{"bb-logs/last-night", &c};
  const std::string compared = bb::html_report(run, &rc);
  EXPECT_NE(compared.find("<strong>Compared with bb-logs/last-night:</strong> 1 regression."), std::string::npos);
  EXPECT_NE(compared.find("<section id=\"compared\">"), std::string::npos);
  EXPECT_NE(compared.find("<span class=\"badge fail\">SLOWER 1</span>"), std::string::npos);
  EXPECT_NE(compared.find("<td class=\"num\">+40.0%</td><td>its library changed</td>"), std::string::npos);
  EXPECT_EQ(html.find("id=\"compared\""), std::string::npos);
}

TEST(ReportText, CleanTextKeepsUtf8AndWritesControlsOut) {
  EXPECT_EQ(bb::clean_text("a\x01z\tb\n"), "a\\x01z\tb\n");
  EXPECT_EQ(bb::clean_text("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(bb::clean_text("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(bb::clean_text("\xc3"), "\xEF\xBF\xBD");              // truncated sequence
  EXPECT_EQ(bb::clean_text("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(bb::truncate_text("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9... (2 more bytes)");  // not inside a character
}

}  // namespace

// Paired timing gives each speedup a 99% interval. The reports carry the implementation's
// interval (the geomean's, RUNNING.md "Speedups"), mark one that holds 1.0 "n.s.", and count
// perf@p on its low end: scale__good's 4x whose interval holds 1.0 is not "faster than 1".
TEST(Reports, SpeedupIntervalsReachEveryReportAndPerfAtCountsTheLowEnd) {
  RunRecord run = every_verdict_run();
  auto set = [](TestResult& r, double low, double high) {
    r.performance.speedup_low = low;
    r.performance.speedup_high = high;
    r.performance.speedup_confidence = 0.99;
    r.performance.speedup_pairs = 16;
  };
  for (auto& r : run.tests) {
    if (!r.performance.speedup) continue;
    if (r.id.impl == "scale__good") set(r, *r.performance.speedup > 4 ? 0.25 : 1.9, *r.performance.speedup > 4 ? 256 : 2.1);  // 8x: a wide interval
    if (r.id.impl == "scale__slow") set(r, 0.45, 0.55);
  }
  bb::rescore(run);
  // Expected geomean interval of scale__good: log-space halves combined as standard errors.
  const double z = 2.5758293035489004;
  const double se_big = std::log(2.0 / 1.9) / z, se_huge = std::log(8.0 / 0.25) / z;
  const double half = z * std::sqrt(se_big * se_big + se_huge * se_huge) / 2;
  const double low = 4.0 * std::exp(-half), high = 4.0 * std::exp(half);
  ASSERT_LT(low, 1.0);

  const auto rows = parse_csv(bb::operator_summary_csv(run));
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  ASSERT_TRUE(col.count("speedup_low") && col.count("speedup_high"));
  std::map<std::string, std::vector<std::string>> impl;
  for (std::size_t i = 3; i < rows.size(); ++i) impl[rows[i][col["implementation"]]] = rows[i];
  EXPECT_NEAR(std::stod(impl["scale__good"][col["speedup_low"]]), low, 1e-6);
  EXPECT_NEAR(std::stod(impl["scale__good"][col["speedup_high"]]), high, 1e-6);
  EXPECT_EQ(impl["scale__good"][col["perf@1"]], "0");  // 4x, but not significantly above 1
  EXPECT_NEAR(std::stod(impl["scale__slow"][col["speedup_low"]]), 0.45, 1e-6);
  EXPECT_EQ(impl["scale__wrong"][col["speedup_low"]], "");  // a failed implementation has none
  EXPECT_EQ(rows[1][col["speedup_low"]], "");               // nor does an op row

  const std::string md = bb::overall_summary_md(run);
  EXPECT_NE(md.find(fmt::format("4.00x [{:.2f}, {:.2f}] n.s.", low, high)), std::string::npos);
  EXPECT_NE(md.find("0.50x [0.45, 0.56] |"), std::string::npos);  // significant: no mark
  const std::string html = bb::html_report(run);
  EXPECT_NE(html.find(fmt::format("4.00x [{:.2f}, {:.2f}] n.s.", low, high)), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The per-case table: tests.csv, the console's --table, the HTML's "Per case"

namespace {
RunRecord with_figures() {
  RunRecord run = every_verdict_run();
  for (auto& t : run.tests) {
    if (t.id.op == "scale") t.id.shapes = "x: 1024x4096 float16, alpha: [] float32";
    if (t.id.impl == "scale__good" && t.id.case_id == "performance/big") {
      t.outcome.errors = bb::ErrorFigures{"y", 9.765625e-4, 4.8e-4, 0.125};
      t.performance.tflops = 0.0123;
      t.performance.speedup_low = 1.9;
      t.performance.speedup_high = 2.1;
    }
    if (t.id.impl == "scale__slow") t.outcome.errors = bb::ErrorFigures{"y", 0.0, 0.0, 0.0};
    if (t.id.impl == "scale__wrong" && t.outcome.verdict == Verdict::fail) t.outcome.errors = bb::ErrorFigures{"y", 0.0263, 0.01, INFINITY};
  }
  return run;
}
}  // namespace

TEST(CaseTable, TestsCsvHasOneRowPerTestWithShapesSpeedAndErrorFiguresOnPassingTests) {
  const RunRecord run = with_figures();
  const auto rows = parse_csv(bb::tests_csv(run));
  ASSERT_EQ(rows.size(), run.tests.size() + 1);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  for (const char* c : {"op", "implementation", "case", "device", "shapes", "verdict", "median_s", "gbps", "tflops", "peak_bandwidth_pct",
                        "speedup", "speedup_low", "speedup_high", "max_abs_error", "max_rel_error", "tolerance_used", "message"})
    ASSERT_TRUE(col.count(c)) << c;
  for (const auto& r : rows) ASSERT_EQ(r.size(), rows[0].size());
  auto find = [&](const std::string& impl, const std::string& c, const std::string& verdict) {
    for (const auto& r : rows)
      if (r[col["implementation"]] == impl && r[col["case"]] == c && r[col["verdict"]] == verdict) return r;
    ADD_FAILURE() << impl << " " << c << " " << verdict << " not found";
    return rows[0];
  };
  const auto good = find("scale__good", "performance/big", "PASS");
  EXPECT_EQ(good[col["shapes"]], "x: 1024x4096 float16, alpha: [] float32");
  EXPECT_NEAR(std::stod(good[col["median_s"]]), 1e-5, 1e-12);
  EXPECT_NEAR(std::stod(good[col["gbps"]]), 800, 1e-9);
  EXPECT_NEAR(std::stod(good[col["tflops"]]), 0.0123, 1e-12);
  EXPECT_NEAR(std::stod(good[col["speedup"]]), 2.0, 1e-9);
  EXPECT_NEAR(std::stod(good[col["speedup_low"]]), 1.9, 1e-9);
  EXPECT_NEAR(std::stod(good[col["max_abs_error"]]), 9.765625e-4, 1e-12);
  EXPECT_NEAR(std::stod(good[col["tolerance_used"]]), 0.125, 1e-12);
  EXPECT_EQ(good[col["error_output"]], "y");
  // A failed test keeps its error figures but never a time (its timed 3x pass is another row).
  const auto wrong = find("scale__wrong", "correctness/small[n=16]", "FAIL");
  EXPECT_EQ(wrong[col["median_s"]], "");
  EXPECT_EQ(wrong[col["speedup"]], "");
  EXPECT_EQ(wrong[col["tolerance_used"]], "inf");
  EXPECT_NE(wrong[col["message"]].find("2 of 16 elements differ"), std::string::npos);
  // SKIPPED rows are there, with their reason; a hostile message stays one CSV cell.
  const auto cuda = find("scale__cuda", "performance/big", "SKIPPED");
  EXPECT_EQ(cuda[col["device"]], "cuda:0");
  EXPECT_EQ(cuda[col["message"]], "device cuda not available: no driver");
  EXPECT_EQ(find("scale__crash", "correctness/small[n=16]", "CRASH")[col["message"]], "killed by signal SIGSEGV");
  // The report file's table has it.
  bool listed = false;
  for (const auto& f : bb::report_formats()) listed = listed || (std::string(f.file_name) == "tests.csv" && std::string(f.flag) == "--tests-csv");
  EXPECT_TRUE(listed);
}

TEST(CaseTable, TheConsoleTableGroupsEachCasesImplementationsUnderItsShapes) {
  const std::string text = bb::case_table_text(with_figures());
  // scale's performance/big: its shapes once, then good, slow and wrong, aligned.
  const auto big = text.find("  performance/big  x: 1024x4096 float16, alpha: [] float32\n");
  ASSERT_NE(big, std::string::npos) << text;
  std::istringstream lines(text.substr(big));
  std::string head, good, slow, wrong;
  std::getline(lines, head), std::getline(lines, good), std::getline(lines, slow), std::getline(lines, wrong);
  EXPECT_EQ(good.rfind("    scale__good ", 0), 0u) << good;
  EXPECT_NE(good.find("10.00 us"), std::string::npos) << good;
  EXPECT_NE(good.find("800.0"), std::string::npos) << good;
  EXPECT_NE(good.find("0.0123"), std::string::npos) << good;
  EXPECT_NE(good.find("62.5%"), std::string::npos) << good;
  EXPECT_NE(good.find("2.00x  [1.90, 2.10]"), std::string::npos) << good;
  EXPECT_NE(good.find("9.77e-04"), std::string::npos) << good;
  EXPECT_NE(good.find("12.5%"), std::string::npos) << good;
  EXPECT_EQ(slow.rfind("    scale__slow ", 0), 0u) << slow;
  EXPECT_NE(slow.find("0.50x"), std::string::npos) << slow;
  EXPECT_EQ(wrong.rfind("    scale__wrong ", 0), 0u) << wrong;
  // Columns line up: the median's end at one place on every row.
  EXPECT_EQ(good.find(" us"), slow.find(" us")) << good << "\n" << slow;
  // Each op has its header; SKIPPED tests are not rows; the symbols are defined.
  EXPECT_NE(text.find("\nscale per case: 4 cases\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nrms per case: 1 case\n"), std::string::npos);
  EXPECT_EQ(text.find("scale__cuda"), std::string::npos);
  EXPECT_NE(text.find("tol used: the largest |a - e| / (atol + rtol |e|)"), std::string::npos);
  // Hostile bytes in a name are cleaned, never printed raw.
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_EQ(bb::case_table_text(RunRecord{}), "");
}

TEST(HtmlReport, ThePerCaseTableAndLikeFailuresAsOneRow) {
  RunRecord run = with_figures();
  // Five failures of one implementation that differ only in their numbers: one row, four under it.
  for (int i = 0; i < 5; ++i) {
    run.tests.push_back(test("scale", "scale__drift", fmt::format("correctness/small[n={}]", 100 + i), Verdict::fail,
                             fmt::format("output 'y': {} of {} elements differ (atol 1e-05, rtol 1.3e-06); max abs error {}", i + 1, 100 + i, -0.5 * i)));
  }
  bb::rescore(run);
  const std::string html = bb::html_report(run);
  const std::string failures = html.substr(html.find("id=\"failures\""), html.find("id=\"speedup\"") - html.find("id=\"failures\""));
  EXPECT_EQ(count(failures, "<td class=\"name\">scale__drift</td><td class=\"name\">correctness/small"), 1u) << failures;
  EXPECT_NE(html.find("<summary>and 4 more cases like it</summary>"), std::string::npos);
  EXPECT_NE(html.find("correctness/small[n=104]"), std::string::npos);
  // The per-case section: in the navigation, the shapes, GB/s (a CPU case too) and the error figures.
  EXPECT_NE(html.find("<a href=\"#cases\">Per case</a>"), std::string::npos);
  const auto cases = html.find("<table class=\"cases\">");
  ASSERT_NE(cases, std::string::npos);
  const std::string table = html.substr(cases, html.find("</table>", cases) - cases);
  EXPECT_NE(table.find("x: 1024x4096 float16, alpha: [] float32"), std::string::npos);
  EXPECT_NE(table.find("<td class=\"num\">800.0</td>"), std::string::npos);
  EXPECT_NE(table.find("<td class=\"num\">12.5%</td>"), std::string::npos);
  EXPECT_NE(table.find("<td class=\"num\">over</td>"), std::string::npos);
  EXPECT_EQ(table.find("scale__cuda"), std::string::npos);
}
