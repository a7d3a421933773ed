// Real kernels support some shapes only: what an implementation declares it supports (info
// record, manifest) and what it refuses per call (BB_ERR_UNSUPPORTED) are SKIPPED, never
// failed, always shown; a declared precondition is a promise, and a refusal cannot be used to
// drop a case from a score once the case was supported.
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {

nlohmann::json test_of(const nlohmann::json& results, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(results, impl))
    if (t["case"] == c) return t;
  return {{"verdict", "(none)"}, {"message", ""}};
}

}  // namespace

TEST(Preconditions, UnsupportedCasesAreSkippedWithTheReasonAndBrokenPromisesAreErrors) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("preconditions"), "--log-dir", logs.string(), "--timeout", "0.05",
                           "--min-time", "0.001"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // the liar and the dodger
  const auto results = e2e::read_json(logs / "results.json");
  const std::string n7 = "correctness/small[n=7]", n30 = "correctness/small[n=30]", n16 = "correctness/small[n=16]",
                    n1000 = "correctness/small[n=1000]", big = "performance/big";

  // Declared in the info record, or in the manifest: SKIPPED without a call.
  for (const char* impl : {"scale__scale_vec4_declared", "scale__scale_vec4_manifest"}) {
    for (const auto& c : {n7, n30}) {
      const auto t = test_of(results, impl, c);
      EXPECT_EQ(t["verdict"], "SKIPPED") << impl << " " << t.dump();
      EXPECT_EQ(t["message"], "the implementation's precondition 'x.0 % 4 == 0' does not hold") << t.dump();
    }
    for (const auto& c : {n16, n1000, big}) EXPECT_EQ(test_of(results, impl, c)["verdict"], "PASS") << impl << " " << test_of(results, impl, c).dump();
  }
  // Said per call, declared nowhere: SKIPPED with the plugin's own message.
  for (const auto& c : {n7, n30}) {
    const auto t = test_of(results, "scale__scale_vec4_unsupported", c);
    EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("unsupported by the implementation: n = "), std::string::npos) << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("vec4 loads need a multiple of 4"), std::string::npos) << t.dump();
  }
  EXPECT_EQ(test_of(results, "scale__scale_vec4_unsupported", big)["verdict"], "PASS");
  // Declared x.0 % 4 == 0, then refused n = 1000: an ERROR.
  const auto liar = test_of(results, "scale__scale_vec4_liar", n1000);
  EXPECT_EQ(liar["verdict"], "ERROR") << liar.dump();
  EXPECT_NE(liar["message"].get<std::string>().find("BB_ERR_UNSUPPORTED: n = 1000 is not supported after all: its declared "
                                                     "preconditions admit this case"),
            std::string::npos) << liar.dump();
  // Right when checked, BB_ERR_UNSUPPORTED once timed: an ERROR, and no speedup.
  const auto dodge = test_of(results, "scale__scale_dodge", big);
  EXPECT_EQ(dodge["verdict"], "ERROR") << dodge.dump();
  EXPECT_NE(dodge["message"].get<std::string>().find("not this one"), std::string::npos) << dodge.dump();

  // Never counted as failed: the skips are in the skipped column, and the console shows them
  // grouped by reason.
  for (const auto& s : results["scores"]["implementations"])
    if (s["impl"] == "scale__scale_vec4_declared") {
      EXPECT_EQ(s["failed"], 0) << s.dump();
      EXPECT_EQ(s["skipped"], 2) << s.dump();
      EXPECT_EQ(s["passed"], 3) << s.dump();
    }
  EXPECT_NE(run.out.find("SKIPPED scale__scale_vec4_declared: 2 tests: the implementation's precondition 'x.0 % 4 == 0' does not hold\n"),
            std::string::npos) << run.out;

  // Int32 ids into a float table: "float32" constrains the floating tensors only, so it runs
  // (its ids' bound, the table's rows, is an expression); "ids:int64" names the tensor.
  for (const char* c : {"correctness/small[rows=5,dim=16,n=9]", "correctness/small[rows=64,dim=16,n=9]"}) {
    EXPECT_EQ(test_of(results, "gather__gather_float", c)["verdict"], "PASS") << c << run.out;
    const auto t = test_of(results, "gather__gather_int64ids", c);
    EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();
    EXPECT_EQ(t["message"], "dtype int32 of 'ids' is not supported by the implementation (it supports float32, ids:int64)") << t.dump();
  }
}

// --list marks the cases each implementation will skip.
TEST(Preconditions, ListSaysWhichCasesEachImplementationSkips) {
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("preconditions"), "--ops", "scale", "--list"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("impl:      scale__scale_vec4_declared  (version 1.0)  preconditions: x.0 % 4 == 0  (skips 2 of 5 cases)\n"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("case:      correctness/small[n=7]  (SKIPPED by scale_vec4_declared, scale_vec4_liar, scale_vec4_manifest)\n"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("case:      correctness/small[n=16]\n"), std::string::npos) << run.out;
}

// --strict, for grading: a case an implementation refuses (declared, or BB_ERR_UNSUPPORTED) is a
// failure in every score and in the exit status, and the reports say which rule scored them.
TEST(Preconditions, TheStrictRuleScoresARefusalAsAFailure) {
  const std::vector<std::string> common = {"--custom-ops-root", e2e::fixture_root("preconditions"), "--impls",
                                           "scale_vec4_declared,scale_vec4_unsupported,gather_int64ids", "--correctness-only"};
  auto with = [&](const std::filesystem::path& logs, std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--log-dir", logs.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return backendbench(args);
  };
  const auto standard_logs = e2e::temp_dir("standard"), strict_logs = e2e::temp_dir("strict");
  const auto standard = with(standard_logs, {});
  const auto strict = with(strict_logs, {"--strict"});
  EXPECT_EQ(standard.exit_code, 0) << standard.out << standard.err;
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;

  const auto s = e2e::read_json(standard_logs / "results.json"), t = e2e::read_json(strict_logs / "results.json");
  EXPECT_EQ(s["score_rule"], "standard");
  EXPECT_EQ(t["score_rule"], "strict");
  EXPECT_EQ(t["options"]["score_rule"], "strict");
  EXPECT_EQ(t["scores"]["rule"], "strict");
  // The same verdicts; each refusal is marked as the implementation's own.
  int refused = 0;
  for (const auto& x : t["tests"])
    if (x["verdict"] == "SKIPPED") {
      EXPECT_EQ(x.value("refused", false), true) << x.dump();
      ++refused;
    }
  EXPECT_EQ(refused, 2 + 2 + 2) << t["tests"].dump();  // declared, said per call, an unsupported dtype
  for (const auto& rule : {s, t})
    for (const auto& i : rule["scores"]["implementations"]) {
      const bool is_strict = rule["scores"]["rule"] == "strict";
      // gather_int64ids refuses every case it has: under the standard rule it never ran.
      const bool refuses_all = i["impl"] == "gather__gather_int64ids";
      EXPECT_EQ(i["refused"], 2) << i.dump();
      EXPECT_EQ(i["fully_correct"], !is_strict && !refuses_all) << i.dump();
      EXPECT_EQ(i["ran"], is_strict || !refuses_all) << i.dump();
      EXPECT_EQ(i["failed"], is_strict ? 2 : 0) << i.dump();
      EXPECT_EQ(i["skipped"], is_strict ? 0 : 2) << i.dump();
    }
  EXPECT_LT(t["scores"]["correctness_rate"].get<double>(), s["scores"]["correctness_rate"].get<double>());
  // Said where the scores are read.
  EXPECT_NE(strict.out.find("scored strict: a refused case is a failure"), std::string::npos) << strict.out;
  EXPECT_EQ(standard.out.find("scored strict"), std::string::npos) << standard.out;
  auto text_of = [](const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_NE(text_of(strict_logs / "OVERALL_SUMMARY.md").find("Scored **strict"), std::string::npos);
  EXPECT_NE(text_of(strict_logs / "report.html").find("a refused case is a failure"), std::string::npos);
  // A rescore of the run (merge of its one shard) keeps its rule.
  const auto merged = e2e::temp_dir("merged");
  const auto merge = backendbench({"merge", "--log-dir", merged.string(), strict_logs.string()});
  ASSERT_EQ(merge.exit_code, 1) << merge.out << merge.err;
  EXPECT_EQ(e2e::read_json(merged / "results.json")["scores"]["rule"], "strict");
}
