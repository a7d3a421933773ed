// Real kernels support some shapes only: what an implementation declares it supports (info
// record, manifest) and what it refuses per call (BB_ERR_UNSUPPORTED) are SKIPPED, never
// failed, always shown; a declared precondition is a promise, and a refusal cannot be used to
// drop a case from a score once the case was supported.
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
    for (const auto& c : {n16, n1000, big}) EXPECT_EQ(test_of(results, impl, c)["verdict"], "PASS") << impl << " " << c;
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
