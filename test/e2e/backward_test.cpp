// Backward passes through a whole run (the manifest's backward:, --mode): each hostile backward
// its verdict, the mode in every report, a backward judged on inputs no forward call saw.
#include <filesystem>
#include <regex>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {

const nlohmann::json* test_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  for (const auto& t : results["tests"])
    if (t["impl"] == impl && t["case"] == c) return &t;
  return nullptr;
}
std::string verdict_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  const auto* t = test_of(results, impl, c);
  return t ? (*t)["verdict"].get<std::string>() : "(none)";
}
std::string message_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  const auto* t = test_of(results, impl, c);
  return t ? (*t)["message"].get<std::string>() : "(none)";
}
std::string text_of(const std::filesystem::path& f) {
  std::ifstream in(f);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(Backward, EveryHostileBackwardGetsItsVerdictInAWholeRun) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--log-dir", logs.string(), "--correctness-only", "--variants", "default"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const std::string f = "correctness/small[n=16]", b = "bwd:correctness/small[n=16]";
  // Both passes of each, by default (the manifest declares its backward's modes: fwd, bwd).
  for (const char* impl : {"scale__scale_bwd_good", "scale__scale_bwd_recompute", "expo__expo_bwd_good"}) {
    EXPECT_EQ(verdict_of(results, impl, f), "PASS") << impl;
    EXPECT_EQ(verdict_of(results, impl, b), "PASS") << impl << ": " << message_of(results, impl, b);
  }
  const auto* t = test_of(results, "scale__scale_bwd_good", b);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["mode"], "bwd");
  EXPECT_EQ((*test_of(results, "scale__scale_bwd_good", f))["mode"], "fwd");
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_missing_term", f), "PASS");  // its forward is right
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_missing_term", b), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_bwd_missing_term", b).find("output 'grad_x'"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_partial", b), "UNWRITTEN");
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_accumulate", b), "FAIL");
  // Right on its first call of each size only: the next backward test of that size in its worker is not.
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_lazy", "bwd:correctness/small~zeros[n=16]"), "UNWRITTEN");
  // A forward alone: its backward tests SKIPPED, saying why, as its own refusal (--strict: a failure).
  EXPECT_EQ(verdict_of(results, "scale__scale_forward_only", f), "PASS");
  EXPECT_EQ(verdict_of(results, "scale__scale_forward_only", b), "SKIPPED");
  EXPECT_NE(message_of(results, "scale__scale_forward_only", b).find("exports no scale_backward_impl"), std::string::npos);
  EXPECT_TRUE((*test_of(results, "scale__scale_forward_only", b)).value("refused", false));
  // Reusing the outputs its forward left behind: the backward's inputs are none its forward saw.
  EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", f), "PASS");
  EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", b), "FAIL") << message_of(results, "expo__expo_bwd_stash", b);
  EXPECT_NE(message_of(results, "expo__expo_bwd_stash", b).find("output 'grad_x'"), std::string::npos);
  // The mode in every report: the case ids, the CSV's column, the HTML, JUnit, markdown.
  const std::string csv = text_of(logs / "tests.csv");
  EXPECT_NE(csv.find(",kind,mode,device,"), std::string::npos) << csv.substr(0, 300);
  EXPECT_NE(csv.find("bwd:correctness/small[n=16],,correctness,bwd,cpu"), std::string::npos);
  for (const char* file : {"report.html", "junit.xml", "OVERALL_SUMMARY.md", "results.jsonl"})
    EXPECT_NE(text_of(logs / file).find("bwd:correctness/small"), std::string::npos) << file;
  EXPECT_NE(run.out.find("bwd:correctness/small"), std::string::npos) << run.out;
}

TEST(Backward, ModeChoosesThePassesAndABackwardAloneIsJudgedOnItsOwn) {
  const auto logs = e2e::temp_dir("logs");
  auto fwd = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "expo", "--log-dir", (logs / "fwd").string(),
                           "--correctness-only", "--mode", "fwd"});
  EXPECT_EQ(fwd.exit_code, 0) << fwd.out << fwd.err;
  std::set<std::string> modes;
  const auto forward = e2e::read_json(logs / "fwd" / "results.json");
  for (const auto& t : forward["tests"]) modes.insert(t["mode"].get<std::string>());
  EXPECT_EQ(modes, std::set<std::string>{"fwd"});
  // The backward alone: no forward call in its worker, nothing kept to reuse; the stash's
  // backward computes, and PASSes: it is judged on what it does with its inputs.
  auto bwd = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "expo", "--log-dir", (logs / "bwd").string(),
                           "--correctness-only", "--mode", "bwd"});
  EXPECT_EQ(bwd.exit_code, 0) << bwd.out << bwd.err;
  const auto results = e2e::read_json(logs / "bwd" / "results.json");
  modes.clear();
  for (const auto& t : results["tests"]) modes.insert(t["mode"].get<std::string>());
  EXPECT_EQ(modes, std::set<std::string>{"bwd"});
  EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", "bwd:correctness/small[n=1000]"), "PASS");
  EXPECT_EQ(results["options"]["modes"], "bwd");
  // --cases names a case in every mode; a mode that is none is an error naming the modes.
  auto one = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "expo", "--log-dir", (logs / "one").string(),
                           "--correctness-only", "--cases", "correctness/small[n=16]", "--impls", "expo_bwd_good"});
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  std::set<std::string> cases;
  const auto picked = e2e::read_json(logs / "one" / "results.json");
  for (const auto& t : picked["tests"]) cases.insert(t["case"].get<std::string>());
  EXPECT_EQ(cases, (std::set<std::string>{"correctness/small[n=16]", "bwd:correctness/small[n=16]"}));
  auto wrong = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--mode", "backwards"});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
  EXPECT_NE((wrong.out + wrong.err).find("'backwards' is no mode; the modes are fwd"), std::string::npos) << wrong.out << wrong.err;
}

// Under --strict a forward-only implementation of an op with a backward fails its bwd tests: it
// cannot score better by leaving a slow backward out.
TEST(Backward, UnderStrictAMissingBackwardIsAFailure) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "scale", "--impls", "scale_forward_only", "--correctness-only",
                           "--strict", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["scores"]["implementations"][0]["fully_correct"], false) << r["scores"].dump();
  auto lenient = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "scale", "--impls", "scale_forward_only",
                               "--correctness-only", "--log-dir", (logs / "standard").string()});
  EXPECT_EQ(lenient.exit_code, 0) << "the standard rule: a refusal counts for nothing\n" << lenient.out;
}

TEST(Backward, AnOpWithoutABackwardSaysSoInModeBwd) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good", "--log-dir", logs.string(),
                           "--correctness-only", "--mode", "bwd"});
  EXPECT_NE((run.out + run.err).find("declares no backward"), std::string::npos) << run.out << run.err;
  EXPECT_TRUE(e2e::read_json(logs / "results.json")["tests"].empty());
}

// compare and merge keep a case's two passes apart: a backward that breaks is a regression of
// its bwd tests alone; shards of a run with both passes merge to the whole run.
TEST(Backward, CompareAndMergeKeepThePassesApart) {
  namespace fs = std::filesystem;
  const auto dir = e2e::temp_dir("runs");
  auto sweep = [&](const std::string& root, const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args{"--custom-ops-root", root, "--ops", "scale", "--impls", "scale_bwd_good,scale_forward_only", "--correctness-only",
                                  "-q", "--run-id", "e2e-bwd", "--log-dir", (dir / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return backendbench(args);
  };
  const auto base = sweep(e2e::fixture_root("backward"), "base", {});
  ASSERT_TRUE(fs::exists(dir / "base" / "results.json")) << base.out << base.err;
  fs::copy(e2e::fixture_root("backward"), dir / "root", fs::copy_options::recursive);
  fs::copy_file(dir / "root" / "scale" / "scale_bwd_missing_term.so", dir / "root" / "scale" / "scale_bwd_good.so", fs::copy_options::overwrite_existing);
  const auto next = sweep((dir / "root").string(), "next", {});
  ASSERT_TRUE(fs::exists(dir / "next" / "results.json")) << next.err;
  const auto r = backendbench({"compare", (dir / "base").string(), (dir / "next").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("scale/scale__scale_bwd_good/bwd:correctness/small"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("scale/scale__scale_bwd_good/correctness/small"), std::string::npos) << "its forward did not change:\n" << r.out;

  for (int i = 1; i <= 2; ++i) {
    const auto s = sweep(e2e::fixture_root("backward"), "shard-" + std::to_string(i), {"--shard", std::to_string(i) + "/2"});
    ASSERT_TRUE(fs::exists(dir / ("shard-" + std::to_string(i)) / "results.json")) << s.err;
  }
  const auto m = backendbench({"merge", "--log-dir", (dir / "merged").string(), (dir / "shard-1").string(), (dir / "shard-2").string()});
  EXPECT_EQ(m.exit_code, base.exit_code) << m.out << m.err;
  const auto whole = e2e::read_json(dir / "base" / "results.json"), merged = e2e::read_json(dir / "merged" / "results.json");
  std::multiset<std::string> a, b;
  for (const auto& t : whole["tests"]) a.insert(t["impl"].get<std::string>() + " " + t["mode"].get<std::string>() + " " + t["case"].get<std::string>());
  for (const auto& t : merged["tests"]) b.insert(t["impl"].get<std::string>() + " " + t["mode"].get<std::string>() + " " + t["case"].get<std::string>());
  EXPECT_EQ(a, b);
  EXPECT_GT(a.count("scale__scale_bwd_good bwd bwd:correctness/small[n=16]"), 0u);
  EXPECT_EQ(backendbench({"compare", (dir / "base").string(), (dir / "merged").string()}).exit_code, 0);
}

// Timed, a bwd test is paired against the baseline's backward (here the reference's), and each
// mode's speedup is given apart where both were timed: the console's op line, the markdown's
// and HTML's tables, results.json's scores. (Paired.*: timed tests run alone, RUN_SERIAL.)
TEST(Paired, ABackwardIsTimedAgainstTheBaselinesBackwardEachModesSpeedupApart) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--ops", "scale", "--impls", "scale_bwd_good,scale_forward_only",
                           "--variants", "none", "--min-time", "0.02", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  const auto* t = test_of(r, "scale__scale_bwd_good", "bwd:performance/big");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["verdict"], "PASS") << t->dump();
  EXPECT_GT((*t)["speedup"].get<double>(), 0.0) << "paired against the reference's backward: " << t->dump();
  EXPECT_GT((*t)["gbps"].get<double>(), 0.0) << "of the backward's least traffic: " << t->dump();
  EXPECT_DOUBLE_EQ((*t)["bytes"].get<double>(), 3 * 4096 * 4.0) << "x and grad_y read, grad_x written";
  for (const auto& s : r["scores"]["implementations"]) {
    if (s["impl"] == "scale__scale_bwd_good") {
      EXPECT_TRUE(s["speedup_by_mode"].contains("fwd") && s["speedup_by_mode"].contains("bwd")) << s.dump();
    } else {
      EXPECT_FALSE(s.contains("speedup_by_mode")) << "timed in one mode: " << s.dump();
    }
  }
  EXPECT_TRUE(r["scores"]["ops"][0]["speedup_by_mode"].contains("bwd")) << r["scores"].dump();
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(op scale +correct 2/2  geomean speedup [0-9.]+x \(fwd [0-9.]+x, bwd [0-9.]+x\))"))) << run.out;
  EXPECT_NE(text_of(logs / "OVERALL_SUMMARY.md").find("(fwd "), std::string::npos);
  EXPECT_NE(text_of(logs / "report.html").find("(fwd "), std::string::npos);
}

// Where the reference has no backward, a bwd test is judged by central finite differences of the
// reference's forward in float64 (worker/finite_differences.hpp), on the manifest's own small
// cases, and the run says so; a wrong gradient still FAILs naming it.
TEST(Backward, WithoutAReferenceBackwardFiniteDifferencesJudgeTheSmallCases) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward_fd"), "--log-dir", logs.string(), "--correctness-only",
                           "--variants", "default"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(std::regex_search(run.err + run.out, std::regex("backward: the reference scale_reference has no backward \\(scale_backward_reference\\): "
                                                              "3 of 13 bwd cases are checked against central finite differences of its "
                                                              "forward in float64")))
      << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  for (const char* c : {"bwd:correctness/small[n=16]", "bwd:correctness/small[n=1000]", "bwd:performance/big"}) {
    EXPECT_EQ(verdict_of(results, "scale__scale_bwd_good", c), "PASS") << c << ": " << message_of(results, "scale__scale_bwd_good", c);
    EXPECT_EQ(verdict_of(results, "scale__scale_bwd_missing_term", c), "FAIL") << c;
    EXPECT_NE(message_of(results, "scale__scale_bwd_missing_term", c).find("output 'grad_x'"), std::string::npos);
    EXPECT_EQ(verdict_of(results, "expo__expo_bwd_good", c), "PASS") << c << ": " << message_of(results, "expo__expo_bwd_good", c);
    EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", c), "FAIL") << c;
  }
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_good", "bwd:correctness/small~zeros[n=16]"), "(none)") << "a value variant is not differenced";
  const auto* t = test_of(results, "expo__expo_bwd_good", "bwd:correctness/small[n=1000]");
  ASSERT_NE(t, nullptr);
  EXPECT_LT((*t)["errors"]["max_rel_error"].get<double>(), 1e-5) << "exp'(x) = exp(x) to float32's precision: " << t->dump();
}

// Python backward passes (docs/PYTHON.md, Backward passes): a torch.autograd.Function's backward
// and plain PyTorch's, both through autograd; a scale_backward of its own; a missing term FAILs
// naming its gradient; a forward autograd cannot differentiate SKIPPED, saying what to define; one
// that writes its gradient only where it guesses it is checked UNWRITTEN; one that rewrites the
// glue's autograd path ERROR. Then a Python reference,
// whose backward is autograd's, judges libraries' backward passes.
TEST(Backward, PythonBackwardsFromAutogradOrTheirOwnGetTheirVerdicts) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("python_backward"), "--log-dir", logs.string(), "--correctness-only"});
  const auto results = e2e::read_json(logs / "results.json");
  const std::string f = "correctness/small[n=1000]", b = "bwd:correctness/small[n=1000]";
  const std::string first = message_of(results, "scale__scale_plain", f);
  if (first.find("no Python bridge") != std::string::npos || first.find("No module named 'torch'") != std::string::npos)
    GTEST_SKIP() << "no Python implementations here: " << first;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  for (const char* impl : {"scale__scale_autograd", "scale__scale_plain", "scale__scale_explicit"}) {
    EXPECT_EQ(verdict_of(results, impl, f), "PASS") << impl << ": " << message_of(results, impl, f);
    EXPECT_EQ(verdict_of(results, impl, b), "PASS") << impl << ": " << message_of(results, impl, b);
  }
  EXPECT_EQ(verdict_of(results, "scale__scale_missing_term", f), "PASS");
  EXPECT_EQ(verdict_of(results, "scale__scale_missing_term", b), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_missing_term", b).find("output 'grad_x'"), std::string::npos)
      << message_of(results, "scale__scale_missing_term", b);
  EXPECT_EQ(verdict_of(results, "scale__scale_nodiff", f), "PASS");
  EXPECT_EQ(verdict_of(results, "scale__scale_nodiff", b), "SKIPPED");
  EXPECT_NE(message_of(results, "scale__scale_nodiff", b).find("not differentiable by PyTorch"), std::string::npos);
  EXPECT_NE(message_of(results, "scale__scale_nodiff", b).find("define scale_backward"), std::string::npos);
  EXPECT_EQ(verdict_of(results, "scale__scale_lazy_grad", b), "UNWRITTEN") << message_of(results, "scale__scale_lazy_grad", b);
  EXPECT_EQ(verdict_of(results, "scale__scale_lazy_grad", f), "PASS");
  // It rewrites the glue's autograd path to replay its first gradients: refused, every call.
  EXPECT_EQ(verdict_of(results, "scale__scale_patchgrad", b), "ERROR");
  EXPECT_NE(message_of(results, "scale__scale_patchgrad", b).find("changed BackendBench's Python glue"), std::string::npos)
      << message_of(results, "scale__scale_patchgrad", b);

  const auto ref_logs = e2e::temp_dir("ref_logs");
  auto ref_run = backendbench({"--custom-ops-root", e2e::fixture_root("python_backward_ref"), "--log-dir", ref_logs.string(), "--correctness-only"});
  EXPECT_EQ(ref_run.exit_code, 1) << ref_run.out << ref_run.err;
  const auto by_python = e2e::read_json(ref_logs / "results.json");
  EXPECT_NE(ref_run.out.find("reference scale_reference (library)"), std::string::npos) << ref_run.out;
  EXPECT_EQ(ref_run.out.find("finite differences"), std::string::npos) << "autograd's backward, not differences: " << ref_run.out;
  for (const char* impl : {"scale__scale_bwd_good", "scale__scale_explicit"})
    EXPECT_EQ(verdict_of(by_python, impl, b), "PASS") << impl << ": " << message_of(by_python, impl, b);
  EXPECT_EQ(verdict_of(by_python, "scale__scale_bwd_missing_term", b), "FAIL");
}

// A BackendBench-py folder under --check-backwards, as that suite checks gradients: the loss is
// the sum of the outputs, every floating input differentiable, gradients compared at 1e-2, the
// correctness tests only (none timed), the reference's backward autograd's. Without the flag,
// the folder runs its forward alone.
TEST(Backward, CheckBackwardsChecksABackendBenchPyFolderAsThatSuiteDoes) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("bbpy"), "--log-dir", logs.string(), "--correctness-only", "--check-backwards"});
  const auto results = e2e::read_json(logs / "results.json");
  const std::string m = message_of(results, "axpy__axpy_torch", "correctness/test_0");
  if (m.find("no Python bridge") != std::string::npos || run.out.find("No module named 'torch'") != std::string::npos)
    GTEST_SKIP() << "no Python implementations here: " << run.out;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  for (const char* c : {"bwd:correctness/test_0", "bwd:correctness/test_1", "bwd:correctness/test_2"}) {
    EXPECT_EQ(verdict_of(results, "axpy__axpy_torch", c), "PASS") << c << ": " << message_of(results, "axpy__axpy_torch", c);
    // alpha * x - y: d/dy of the summed outputs is -1, not 1.
    EXPECT_EQ(verdict_of(results, "axpy__axpy_wrong", c), "FAIL") << c;
    EXPECT_NE(message_of(results, "axpy__axpy_wrong", c).find("output 'grad_arg1'"), std::string::npos) << message_of(results, "axpy__axpy_wrong", c);
    EXPECT_NE(message_of(results, "axpy__axpy_wrong", c).find("atol 0.01, rtol 0.01"), std::string::npos) << message_of(results, "axpy__axpy_wrong", c);
    // It writes out=: autograd cannot take its gradients.
    EXPECT_EQ(verdict_of(results, "axpy__axpy_out", c), "SKIPPED") << c;
  }
  for (const auto& t : results["tests"]) EXPECT_NE(t["case"], "bwd:performance/test_0") << "a timed case got a backward: " << t.dump();
  const auto* g = test_of(results, "axpy__axpy_torch", "bwd:correctness/test_2");
  ASSERT_NE(g, nullptr);
  EXPECT_NE((*g)["shapes"].get<std::string>().find("grad_out0"), std::string::npos) << g->dump();

  const auto plain_logs = e2e::temp_dir("plain_logs");
  backendbench({"--custom-ops-root", e2e::fixture_root("bbpy"), "--log-dir", plain_logs.string(), "--correctness-only"});
  for (const auto& t : e2e::read_json(plain_logs / "results.json")["tests"]) EXPECT_EQ(t["mode"], "fwd") << t.dump();
}

// --mode fwd_bwd (tritonbench's): the forward, then the backward on the same inputs, one call
// checked whole (the forward's outputs and the gradients, each within its own tolerance) and
// timed whole. A backward that reuses what its own forward left behind is right here (the pair
// on its own forward), and FAILs in bwd alone; a missing term FAILs naming its gradient; a
// forward alone is SKIPPED as its refusal. With no reference backward, the reference's pair is
// its forward and finite differences; a Python file's pair is SKIPPED (not supported yet).
TEST(Backward, FwdBwdChecksThePairOnTheImplementationsOwnForward) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--log-dir", logs.string(), "--correctness-only", "--variants", "none",
                           "--mode", "fwd,bwd,fwd_bwd"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const std::string p = "fwd_bwd:correctness/small[n=16]", b = "bwd:correctness/small[n=16]";
  const auto* pair = test_of(results, "scale__scale_bwd_good", p);
  ASSERT_NE(pair, nullptr) << run.out;
  EXPECT_EQ((*pair)["mode"], "fwd_bwd");
  EXPECT_EQ((*pair)["verdict"], "PASS") << pair->dump();
  EXPECT_NE((*pair)["shapes"].get<std::string>().find("grad_y"), std::string::npos) << pair->dump();
  for (const char* impl : {"scale__scale_bwd_recompute", "expo__expo_bwd_good"}) EXPECT_EQ(verdict_of(results, impl, p), "PASS") << impl;
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_missing_term", p), "FAIL");
  EXPECT_NE(message_of(results, "scale__scale_bwd_missing_term", p).find("output 'grad_x'"), std::string::npos)
      << message_of(results, "scale__scale_bwd_missing_term", p);
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_partial", p), "UNWRITTEN");
  EXPECT_EQ(verdict_of(results, "scale__scale_bwd_accumulate", p), "FAIL");
  EXPECT_EQ(verdict_of(results, "scale__scale_forward_only", p), "SKIPPED");
  EXPECT_TRUE(test_of(results, "scale__scale_forward_only", p)->value("refused", false));
  // The outputs its own forward kept are this call's: right as a pair, wrong alone (after a
  // forward call on other values).
  EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", p), "PASS") << message_of(results, "expo__expo_bwd_stash", p);
  EXPECT_EQ(verdict_of(results, "expo__expo_bwd_stash", b), "FAIL");

  // No reference backward: the reference's pair is its forward, then finite differences.
  const auto fd_logs = e2e::temp_dir("fd_logs");
  auto fd = backendbench({"--custom-ops-root", e2e::fixture_root("backward_fd"), "--log-dir", fd_logs.string(), "--correctness-only",
                          "--variants", "none", "--mode", "fwd_bwd"});
  EXPECT_EQ(fd.exit_code, 1) << fd.out << fd.err;
  const auto by_differences = e2e::read_json(fd_logs / "results.json");
  EXPECT_EQ(verdict_of(by_differences, "scale__scale_bwd_good", p), "PASS") << message_of(by_differences, "scale__scale_bwd_good", p);
  EXPECT_EQ(verdict_of(by_differences, "scale__scale_bwd_missing_term", p), "FAIL");
  EXPECT_EQ(verdict_of(by_differences, "expo__expo_bwd_stash", p), "PASS");

  // A Python file's pair: SKIPPED, saying so (not its refusal).
  const auto py_logs = e2e::temp_dir("py_logs");
  backendbench({"--custom-ops-root", e2e::fixture_root("python_backward"), "--log-dir", py_logs.string(), "--correctness-only", "--variants",
                "none", "--mode", "fwd_bwd", "--impls", "scale_explicit"});
  const auto py = e2e::read_json(py_logs / "results.json");
  EXPECT_EQ(verdict_of(py, "scale__scale_explicit", "fwd_bwd:correctness/small[n=1000]"), "SKIPPED");
  EXPECT_NE(message_of(py, "scale__scale_explicit", "fwd_bwd:correctness/small[n=1000]").find("not supported yet"), std::string::npos);
}

// Timed, each mode is paired against the baseline's same pass: a fwd_bwd test against the
// baseline's forward and backward in one call, its speedup apart from the other modes'.
TEST(Paired, AFwdBwdPairIsTimedAgainstTheBaselinesPair) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("backward"), "--log-dir", logs.string(), "--impls", "scale_bwd_good", "--cases",
                           "performance/big", "--mode", "fwd,bwd,fwd_bwd", "--min-time", "0.02"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  const auto* t = test_of(results, "scale__scale_bwd_good", "fwd_bwd:performance/big");
  ASSERT_NE(t, nullptr) << run.out;
  EXPECT_EQ((*t)["verdict"], "PASS") << t->dump();
  EXPECT_GT((*t)["speedup"].get<double>(), 0.0) << t->dump();
  EXPECT_GT((*t)["baseline_median_s"].get<double>(), 0.0) << t->dump();
  const auto& by_mode = results["scores"]["implementations"][0]["speedup_by_mode"];
  for (const char* m : {"fwd", "bwd", "fwd_bwd"}) EXPECT_TRUE(by_mode.contains(m)) << by_mode.dump();
  EXPECT_NE(run.out.find("fwd_bwd "), std::string::npos) << run.out;
}
