// backendbench compare and backendbench merge, run as a user runs them: on results.json files
// written by hand (to_json of a RunRecord) and on real runs of the hostile fixture root.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "run_files.hpp"
#include "run_record.hpp"
#include "shell_util.hpp"

namespace fs = std::filesystem;

namespace {

bb::TestResult test(const std::string& impl, const std::string& case_id, bb::Verdict v = bb::Verdict::pass) {
  bb::TestResult t;
  t.id.op = "scale";
  t.id.impl = impl;
  t.id.case_id = case_id;
  t.id.kind = "correctness";
  t.outcome.verdict = v;
  if (v != bb::Verdict::pass) t.outcome.message = "12 of 1024 elements differ";
  return t;
}

bb::TestResult timed(const std::string& impl, const std::string& case_id, double median, double noise, double spread) {
  auto t = test(impl, case_id);
  t.id.kind = "performance";
  bb::Timing timing;
  timing.stats.samples = 100;
  timing.stats.median = timing.stats.mean = median;
  timing.stats.q1 = median * (1 - spread);
  timing.stats.q3 = median * (1 + spread);
  timing.stats.rel_stdev = noise;
  t.performance.timing = timing;
  return t;
}

bb::RunRecord run_of(std::vector<bb::TestResult> tests, const std::string& sweep = "sweep-a", bb::ShardInfo shard = {0, 1}) {
  bb::RunRecord r;
  r.sweep_id = sweep;
  r.shard = shard;
  r.host = {{"hostname", fmt::format("node{}", shard.index)}};
  bb::OpReport op;
  op.op = "scale";
  for (const auto& t : tests)
    if (std::find(op.impls.begin(), op.impls.end(), t.id.impl) == op.impls.end()) op.impls.push_back(t.id.impl);
  r.ops.push_back(op);
  r.tests = std::move(tests);
  bb::rescore(r);
  return r;
}

fs::path write(const fs::path& file, const bb::RunRecord& r) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << bb::to_json(r).dump(2);
  return file;
}

fs::path write_text(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  return file;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The keys and verdicts of a run's tests, in its order.
std::vector<std::string> tests_in_order(const fs::path& run) {
  std::vector<std::string> out;
  auto r = bb::load_run(run);
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return out;
  }
  for (const auto& t : r->tests) out.push_back(bb::test_key(t) + " " + bb::verdict_name(t.outcome.verdict));
  return out;
}

// Fast implementations of the hostile root: one passes, one is wrong, one returns an error.
const char* kHostileImpls = "scale_good,scale_wrong,scale_error";

}  // namespace

// ---- compare

TEST(Compare, SameRunIsNoRegression) {
  const auto dir = e2e::temp_dir("runs");
  const auto base = write(dir / "base.json", run_of({test("scale__a", "c1"), timed("scale__a", "performance/p", 1e-3, 0.01, 0.01)}));
  const auto r = e2e::backendbench({"compare", base.string(), base.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "OK: no regression")) << r.out;
}

TEST(Compare, PassToFailIsExit3AndNamesTheTest) {
  const auto dir = e2e::temp_dir("runs");
  const auto base = write(dir / "base" / "results.json", run_of({test("scale__a", "c1"), test("scale__a", "c2")}));
  const auto next = write(dir / "new" / "results.json", run_of({test("scale__a", "c1", bb::Verdict::fail), test("scale__a", "c2")}));
  // Log dirs work as well as files.
  const auto r = e2e::backendbench({"compare", (dir / "base").string(), (dir / "new").string(), "--md", (dir / "compare.md").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "REGRESSION")) << r.out;
  EXPECT_TRUE(contains(r.out, "scale/scale__a/c1")) << r.out;
  EXPECT_TRUE(contains(r.out, "12 of 1024 elements differ")) << "the new failure's message:\n" << r.out;
  const std::string md = e2e::read_text(dir / "compare.md");
  EXPECT_TRUE(contains(md, "## backendbench compare: REGRESSION")) << md;
  EXPECT_TRUE(contains(md, "`scale/scale__a/c1`")) << md;
}

TEST(Compare, ClearSlowdownIsExit3NoisyOneAndListedChangesAreNot) {
  const auto dir = e2e::temp_dir("runs");
  const auto base = write(dir / "base.json", run_of({timed("scale__a", "performance/p", 1e-3, 0.02, 0.01), test("scale__a", "gone"),
                                                     test("scale__cuda", "c1")}));
  const auto slow = write(dir / "slow.json", run_of({timed("scale__a", "performance/p", 1.5e-3, 0.02, 0.01), test("scale__a", "gone"),
                                                     test("scale__cuda", "c1")}));
  const auto noisy = write(dir / "noisy.json", run_of({timed("scale__a", "performance/p", 1.5e-3, 0.6, 0.4), test("scale__a", "added"),
                                                       test("scale__cuda", "c1", bb::Verdict::skipped)}));
  const auto r = e2e::backendbench({"compare", base.string(), slow.string(), "--format", "md"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "| **SLOWER** | `scale/scale__a/performance/p` |")) << r.out;
  EXPECT_TRUE(contains(r.out, "+50.0%")) << r.out;
  // The same slowdown is below a 60% threshold.
  EXPECT_EQ(e2e::backendbench({"compare", base.string(), slow.string(), "--threshold", "60"}).exit_code, 0);

  // Noise of 60% hides a 50% slowdown; a removed, a new and a SKIPPED test are listed only.
  const auto n = e2e::backendbench({"compare", base.string(), noisy.string()});
  EXPECT_EQ(n.exit_code, 0) << n.out << n.err;
  for (const char* word : {"INCONCLUSIVE", "REMOVED", "NEW", "LOST COVERAGE", "scale/scale__a/added", "scale/scale__a/gone"})
    EXPECT_TRUE(contains(n.out, word)) << word << "\n" << n.out;
  // ... unless a lost test is asked to count.
  EXPECT_EQ(e2e::backendbench({"compare", base.string(), noisy.string(), "--skip-is-regression"}).exit_code, 3);
}

// A store of past runs (run_store.hpp): NEW against the last N nights together, each test's trend
// over them. One slow night neither hides a regression nor makes the next night a false one; a
// night that cannot be read is named and left out; NEW itself in the store is not its own base.
TEST(Compare, AgainstTheLastNightsOfAStoreWithATrendPerTest) {
  const auto dir = e2e::temp_dir("store");
  const auto night = [&](const std::string& name, const std::string& started, double p, double q) {
    auto r = run_of({timed("scale__a", "performance/p", p, 0.02, 0.01), timed("scale__a", "performance/q", q, 0.02, 0.01), test("scale__a", "c1")});
    r.started_at = started;
    return write(dir / "store" / name / "results.json", r);
  };
  night("2026-11-01", "2026-11-01T02:00:00Z", 5e-3, 1e-3);  // older than the last 3: left out
  night("2026-11-02", "2026-11-02T02:00:00Z", 1.00e-3, 1.0e-3);
  night("2026-11-03", "2026-11-03T02:00:00Z", 1.30e-3, 1.0e-3);  // one slow night
  night("2026-11-04", "2026-11-04T02:00:00Z", 1.01e-3, 1.0e-3);
  write_text(dir / "store" / "2026-11-05" / "results.json", "{ truncated");
  // Tonight: p as usual (1.3 ms the night before would call it faster, 1.0 ms no change); q 60% slower.
  auto tonight = run_of({timed("scale__a", "performance/p", 1.02e-3, 0.02, 0.01), timed("scale__a", "performance/q", 1.6e-3, 0.02, 0.01),
                         test("scale__a", "c1")});
  tonight.started_at = "2026-11-06T02:00:00Z";
  const auto next = write(dir / "store" / "2026-11-06" / "results.json", tonight);  // written into the store, as a nightly job does
  const auto r = e2e::backendbench({"compare", (dir / "store").string(), next.string(), "--last", "3", "--trend-csv", (dir / "trend.csv").string(),
                                    "--md", (dir / "compare.md").string(), "--html", (dir / "compare.html").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "BASE is the last 3 run(s) of")) << r.out;
  const std::string html = e2e::read_text(dir / "compare.html");
  EXPECT_TRUE(contains(html, "<h3>Trend over the last 3 runs</h3>")) << html;
  EXPECT_TRUE(contains(html, "new high</span></td><td class=\"name\">scale/scale__a/performance/q</td><td class=\"num\">+60.0%</td>")) << html;
  EXPECT_TRUE(contains(r.out, "2026-11-02, 2026-11-03, 2026-11-04")) << r.out;
  EXPECT_TRUE(contains(r.out, "2026-11-05/results.json: not valid JSON")) << "the unreadable night is named:\n" << r.out;
  EXPECT_TRUE(contains(r.out, "SLOWER  scale/scale__a/performance/q")) << r.out;
  EXPECT_FALSE(contains(r.out, "scale/scale__a/performance/p ")) << "p is as it was on most nights:\n" << r.out;
  EXPECT_TRUE(contains(r.out, "NEW HIGH  scale/scale__a/performance/q  +60.0% against their median")) << r.out;
  const std::string csv = e2e::read_text(dir / "trend.csv");
  EXPECT_TRUE(contains(csv, "op,impl,case,median_s 2026-11-02T02:00,median_s 2026-11-03T02:00,median_s 2026-11-04T02:00,median_s NEW,vs_median"))
      << csv;
  EXPECT_TRUE(contains(csv, "scale,scale__a,performance/p,0.001,0.0013,0.00101,0.00102,")) << csv;
  EXPECT_TRUE(contains(e2e::read_text(dir / "compare.md"), "### Trend over the last 3 run(s)"));

  // Without the slow night in the window: the same verdicts.
  EXPECT_EQ(e2e::backendbench({"compare", (dir / "store").string(), next.string(), "--last", "1"}).exit_code, 3);
  // --trend-csv needs a store; a store with nothing readable is unusable input, and says why.
  const auto single = e2e::backendbench({"compare", next.string(), next.string(), "--trend-csv", (dir / "t.csv").string()});
  EXPECT_EQ(single.exit_code, 2);
  EXPECT_TRUE(contains(single.err, "--trend-csv needs a store")) << single.err;
  write_text(dir / "broken" / "n1" / "results.json", "[]");
  const auto broken = e2e::backendbench({"compare", (dir / "broken").string(), next.string()});
  EXPECT_EQ(broken.exit_code, 2) << broken.out;
  EXPECT_TRUE(contains(broken.err, "a store of runs with no run to compare with")) << broken.err;
  EXPECT_TRUE(contains(broken.err, "n1/results.json")) << broken.err;
}

// compare --html: the page leads with what changed (the regressions, before the run's standing
// failures), each with its figures, and says what its columns and its ± mean.
TEST(Compare, TheHtmlLeadsWithTheRegressionsAndDefinesItsSymbols) {
  const auto dir = e2e::temp_dir("runs");
  const auto base = write(dir / "base.json", run_of({timed("scale__a", "performance/p", 1e-3, 0.02, 0.01), test("scale__b", "c1", bb::Verdict::fail)}));
  const auto slow = write(dir / "slow.json", run_of({timed("scale__a", "performance/p", 1.5e-3, 0.02, 0.01), test("scale__b", "c1", bb::Verdict::fail)}));
  const auto r = e2e::backendbench({"compare", base.string(), slow.string(), "--html", (dir / "page.html").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  const std::string html = e2e::read_text(dir / "page.html");
  const auto compared = html.find("<section id=\"compared\">"), failures = html.find("<section id=\"failures\">");
  ASSERT_NE(compared, std::string::npos) << html;
  ASSERT_NE(failures, std::string::npos) << html;
  EXPECT_LT(compared, failures) << "the regressions come before the standing failures";
  EXPECT_LT(html.find("<a href=\"#compared\">"), html.find("<a href=\"#failures\">"));
  EXPECT_TRUE(contains(html, "+50.0%")) << html;
  EXPECT_TRUE(contains(html, "change: (now &minus; before) / before")) << html;
  EXPECT_TRUE(contains(html, "± is the samples' relative standard deviation")) << html;
}

TEST(Compare, UnusableInputIsExit2WithTheReason) {
  const auto dir = e2e::temp_dir("runs");
  const auto good = write(dir / "good.json", run_of({test("scale__a", "c1")}));

  const auto missing = e2e::backendbench({"compare", good.string(), (dir / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(contains(missing.err, "nope.json: no such file")) << missing.err;

  std::string text = e2e::read_text(good);
  const auto cut = write_text(dir / "cut.json", text.substr(0, text.size() / 2));
  const auto truncated = e2e::backendbench({"compare", cut.string(), good.string()});
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_TRUE(contains(truncated.err, "BASE " + cut.string() + ": not valid JSON (truncated?)")) << truncated.err;

  auto v1 = bb::to_json(run_of({test("scale__a", "c1")}));
  v1["schema_version"] = 1;
  const auto old = write_text(dir / "v1.json", v1.dump());
  const auto schema = e2e::backendbench({"compare", old.string(), good.string()});
  EXPECT_EQ(schema.exit_code, 2);
  EXPECT_TRUE(contains(schema.err, "v1.json: schema_version 1, expected 2")) << schema.err;

  const auto other = write_text(dir / "other.json", R"({"benchmarks": []})");
  const auto foreign = e2e::backendbench({"compare", good.string(), other.string()});
  EXPECT_EQ(foreign.exit_code, 2);
  EXPECT_TRUE(contains(foreign.err, "NEW " + other.string() + ": not a backendbench results file")) << foreign.err;

  EXPECT_EQ(e2e::backendbench({"compare", good.string()}).exit_code, 2) << "NEW is required";
  EXPECT_EQ(e2e::backendbench({"compare", good.string(), good.string(), "--threshold", "-1"}).exit_code, 2);
}

// A real run against a copy of itself in which the good implementation's library is the wrong
// one: a correctness regression, and compare of a real truncated results.json is unusable.
TEST(Compare, RealRunsOfTheHostileRoot) {
  const auto dir = e2e::temp_dir("runs");
  const auto base = e2e::backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", kHostileImpls, "--correctness-only",
                                       "-q", "--log-dir", (dir / "base").string()});
  ASSERT_TRUE(fs::exists(dir / "base" / "results.json")) << base.err;
  fs::copy(e2e::fixture_root("hostile"), dir / "root", fs::copy_options::recursive);
  fs::copy_file(dir / "root" / "scale" / "scale_wrong.so", dir / "root" / "scale" / "scale_good.so", fs::copy_options::overwrite_existing);
  const auto next = e2e::backendbench({"--custom-ops-root", (dir / "root").string(), "--impls", kHostileImpls, "--correctness-only", "-q",
                                       "--log-dir", (dir / "new").string()});
  ASSERT_TRUE(fs::exists(dir / "new" / "results.json")) << next.err;

  const auto same = e2e::backendbench({"compare", (dir / "base").string(), (dir / "base" / "results.jsonl").string()});
  EXPECT_EQ(same.exit_code, 0) << "a run against its own results.jsonl\n" << same.out << same.err;
  const auto r = e2e::backendbench({"compare", (dir / "base").string(), (dir / "new").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "scale/scale__scale_good/")) << r.out;
  EXPECT_TRUE(contains(r.out, "correctness regression")) << r.out;
  EXPECT_FALSE(contains(r.out, "scale__scale_wrong/")) << "failing in both runs is no change:\n" << r.out;

  const std::string text = e2e::read_text(dir / "new" / "results.json");
  write_text(dir / "cut" / "results.json", text.substr(0, text.size() / 2));
  const auto cut = e2e::backendbench({"compare", (dir / "base").string(), (dir / "cut").string()});
  EXPECT_EQ(cut.exit_code, 2) << cut.out;
  EXPECT_TRUE(contains(cut.err, "not valid JSON (truncated?)")) << cut.err;
}

// ---- merge

// Real shards of the hostile root merged: the same tests, verdicts and order as the unsharded
// run, every report written, the run's exit status.
TEST(Merge, RealShardsMergeToTheUnshardedRun) {
  const auto dir = e2e::temp_dir("runs");
  auto sweep = [&](const std::string& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", kHostileImpls, "--correctness-only", "-q",
                                  "--run-id", "e2e-merge", "--log-dir", (dir / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::backendbench(args);
  };
  const auto whole = sweep("whole", {});
  ASSERT_TRUE(fs::exists(dir / "whole" / "results.json")) << whole.err;
  for (int i = 1; i <= 3; ++i) {
    const auto s = sweep(fmt::format("shard-{}", i), {"--shard", fmt::format("{}/3", i)});
    ASSERT_TRUE(fs::exists(dir / fmt::format("shard-{}", i) / "results.json")) << s.err;
  }
  const auto m = e2e::backendbench({"merge", "--log-dir", (dir / "merged").string(), (dir / "shard-3").string(),
                                    (dir / "shard-1" / "results.json").string(), (dir / "shard-2").string()});
  EXPECT_EQ(m.exit_code, whole.exit_code) << m.out << m.err;
  EXPECT_EQ(tests_in_order(dir / "merged"), tests_in_order(dir / "whole"));
  for (const char* f : {"results.json", "junit.xml", "operator_summary.csv", "OVERALL_SUMMARY.md", "report.html"})
    EXPECT_TRUE(fs::exists(dir / "merged" / f)) << f;
  auto merged = bb::load_run(dir / "merged");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(merged->merged_shards.size(), 3u);
  EXPECT_EQ(merged->shard.count, 1);
  EXPECT_TRUE(merged->complete);
  EXPECT_EQ(merged->host["hosts"].size(), 3u);
  EXPECT_EQ(e2e::backendbench({"compare", (dir / "whole").string(), (dir / "merged").string()}).exit_code, 0);

  // A killed shard: its results.jsonl without the end (no results.json) merges only with
  // --allow-partial, with a warning, and the merged run says it is not complete.
  fs::create_directories(dir / "killed");
  {
    const auto lines = e2e::read_text(dir / "shard-2" / "results.jsonl");
    std::ofstream out(dir / "killed" / "results.jsonl");
    const auto event = lines.find("\"event\":\"run_finished\"");
    ASSERT_NE(event, std::string::npos) << lines;
    const auto finished = lines.rfind('\n', event) + 1;  // that line's start
    out << lines.substr(0, finished) << "{\"event\":\"test\",\"op\":\"sc";  // torn last line
  }
  const auto refused = e2e::backendbench({"merge", "--log-dir", (dir / "partial").string(), (dir / "shard-1").string(),
                                          (dir / "killed").string(), (dir / "shard-3").string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_TRUE(contains(refused.err, "killed/results.jsonl: complete is false")) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "partial" / "results.json"));
  const auto partial = e2e::backendbench({"merge", "--allow-partial", "--log-dir", (dir / "partial").string(), (dir / "shard-1").string(),
                                          (dir / "killed").string(), (dir / "shard-3").string()});
  EXPECT_EQ(partial.exit_code, whole.exit_code) << partial.err;
  EXPECT_TRUE(contains(partial.err, "warning: merge:")) << partial.err;
  auto p = bb::load_run(dir / "partial");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_FALSE(p->complete);
}

// Every refusal: exit 2, the file and the field named, and an existing merged results.json left
// byte for byte as it was.
TEST(Merge, RefusalsNameTheProblemAndLeaveTheOutputAlone) {
  const auto dir = e2e::temp_dir("runs");
  const auto s0 = write(dir / "s0" / "results.json", run_of({test("scale__a", "c1")}, "sweep-a", {0, 2}));
  const auto s1 = write(dir / "s1" / "results.json", run_of({test("scale__a", "c2", bb::Verdict::fail)}, "sweep-a", {1, 2}));
  const auto other = write(dir / "other" / "results.json", run_of({test("scale__a", "c2")}, "sweep-b", {1, 2}));
  const auto three = write(dir / "three" / "results.json", run_of({test("scale__a", "c2")}, "sweep-a", {1, 3}));
  auto v1 = bb::to_json(run_of({test("scale__a", "c2")}, "sweep-a", {1, 2}));
  v1["schema_version"] = 1;
  const auto old = write_text(dir / "v1" / "results.json", v1.dump());
  const std::string s1_text = e2e::read_text(s1);
  const auto cut = write_text(dir / "cut" / "results.json", s1_text.substr(0, s1_text.size() / 2));

  const fs::path out = dir / "merged";
  const auto ok = e2e::backendbench({"merge", "--log-dir", out.string(), s0.string(), s1.string()});
  ASSERT_EQ(ok.exit_code, 1) << "a test failed in shard 2\n" << ok.err;
  EXPECT_TRUE(contains(ok.out, "merged 2 of 2 shard(s) of sweep sweep-a: 2 tests, 1 passed, 1 failed")) << ok.out;
  const std::string before = e2e::read_text(out / "results.json");
  ASSERT_FALSE(before.empty());

  struct Case {
    std::vector<std::string> shards;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{s0.string(), other.string()}, "sweep_id 'sweep-b' differs from " + s0.string() + "'s 'sweep-a': shards of different runs"},
      {{s0.string(), s0.string()}, "are both shard 1/2 (shard.index 0 given twice)"},
      {{s1.string()}, "missing shard 1/2 (shard.index 0)"},
      {{s0.string(), three.string()}, three.string() + ": shard.count 3 differs"},
      {{s0.string(), old.string()}, old.string() + ": schema_version 1, expected 2"},
      {{s0.string(), cut.string()}, cut.string() + ": not valid JSON (truncated?)"},
      {{s0.string(), (dir / "nowhere").string()}, "nowhere: no such file"},
      {{s0.string(), s1.string(), (out / "results.json").string()}, "the merge would overwrite it"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"merge", "--log-dir", out.string()};
    args.insert(args.end(), c.shards.begin(), c.shards.end());
    const auto r = e2e::backendbench(args);
    EXPECT_EQ(r.exit_code, 2) << c.expected << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.err, c.expected)) << "expected: " << c.expected << "\ngot: " << r.err;
    EXPECT_EQ(e2e::read_text(out / "results.json"), before) << "a refused merge changed the output: " << c.expected;
  }
  // The missing shard is fine with --allow-partial; an unsharded run alone regenerates its reports.
  EXPECT_EQ(e2e::backendbench({"merge", "--allow-partial", "--log-dir", (dir / "p").string(), s1.string()}).exit_code, 1);
  const auto whole = write(dir / "whole" / "results.json", run_of({test("scale__a", "c1")}));
  const auto alone = e2e::backendbench({"merge", "--log-dir", (dir / "again").string(), whole.string()});
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_TRUE(fs::exists(dir / "again" / "junit.xml"));
  EXPECT_EQ(e2e::backendbench({"merge", s0.string()}).exit_code, 2) << "--log-dir is required";
}
