// Reference precedence, filters and unusable plugins, end to end.
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

namespace {
std::vector<std::string> args(const std::string& root, const std::filesystem::path& logs, std::vector<std::string> more = {}) {
  std::vector<std::string> a{"--custom-ops-root", root, "--log-dir", logs.string(), "--correctness-only"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}
}  // namespace

TEST(Precedence, AReferenceLibraryServesFirst) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("prec_library"), logs));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // scale_zwrong fails
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["ops"][0]["reference"], "scale_reference");
  EXPECT_EQ(r["ops"][0]["reference_kind"], "library");
  for (const auto& t : e2e::tests_of(r, "scale__scale_alpha")) EXPECT_EQ(t["verdict"], "PASS");
  for (const auto& t : e2e::tests_of(r, "scale__scale_zwrong")) EXPECT_EQ(t["verdict"], "FAIL");
  // No warning about the reference (the sandbox's own, where a wall is down on this host, aside).
  std::string warnings;
  std::istringstream err(run.err);
  for (std::string line; std::getline(err, line);)
    if (line.find("warning") != std::string::npos && line.rfind("warning: worker sandbox:", 0) != 0) warnings += line + "\n";
  EXPECT_EQ(warnings, "") << run.err;
}

TEST(Precedence, OtherwiseTheFirstImplementationWithAWarning) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("prec_impl"), logs));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("scale__scale_alpha serves as the reference and is not scored"), std::string::npos) << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["ops"][0]["reference"], "scale__scale_alpha");
  EXPECT_EQ(r["ops"][0]["reference_kind"], "implementation");
  EXPECT_TRUE(e2e::tests_of(r, "scale__scale_alpha").empty());  // not scored against itself
  for (const auto& t : e2e::tests_of(r, "scale__scale_beta")) EXPECT_EQ(t["verdict"], "PASS");
  for (const auto& t : e2e::tests_of(r, "scale__scale_zwrong")) EXPECT_EQ(t["verdict"], "FAIL");
}

TEST(Precedence, OtherwiseIdentityWithAWarning) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("prec_identity"), logs));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("identity passthrough"), std::string::npos) << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["ops"][0]["reference"], "identity");
  EXPECT_EQ(r["ops"][0]["reference_kind"], "identity");
}

TEST(Filters, OpsRunsEveryImplementationOfTheOp) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(BB_SHIPPED_ROOT, logs, {"--suite", "custom_ops", "--backend", "custom_ops", "--ops", "myop"}));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_FALSE(e2e::tests_of(r, "myop__myop_cpp").empty());
  EXPECT_FALSE(e2e::tests_of(r, "myop__myop_vec").empty());
  for (const auto& t : r["tests"]) EXPECT_EQ(t["op"], "myop");
}

TEST(Filters, ImplsNarrowsToNamedImplementations) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(BB_SHIPPED_ROOT, logs, {"--impls", "myop_vec,rmsnorm__rmsnorm_cpp"}));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_TRUE(e2e::tests_of(r, "myop__myop_cpp").empty());
  EXPECT_FALSE(e2e::tests_of(r, "myop__myop_vec").empty());
  EXPECT_FALSE(e2e::tests_of(r, "rmsnorm__rmsnorm_cpp").empty());
}

TEST(Filters, UnknownNamesAreErrorsThatListWhatExists) {
  auto ops = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop,nosuch", "--no-log"});
  EXPECT_EQ(ops.exit_code, 2);
  EXPECT_NE(ops.err.find("unknown op(s) nosuch; the root has: inplace_rmsnorm_, layernorm, linear_gelu, mul3, mul4, myop, rmsnorm, softmax, vector_add"), std::string::npos) << ops.err;
  auto impls = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--impls", "myop_gpu", "--no-log"});
  EXPECT_EQ(impls.exit_code, 2);
  EXPECT_NE(impls.err.find("unknown implementation(s) myop_gpu; the selected ops have: myop__myop_cpp"), std::string::npos)
      << impls.err;
}

TEST(BadPlugins, EachIsReportedAndTheRestStillRuns) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("bad_plugins"), logs, {"--test-timeout", "3"}));  // loading: 3 s at most
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  for (const char* expected : {"scale_not_a_library.so: not a shared library", "scale_missing_dep.so: unresolved dependency",
                               "scale_unresolved.so: unresolved symbol", "scale_no_symbol.so: missing symbol",
                               "scale_bad_abi.so: ABI version 99.0", "scale_crash_on_load.so: crashed while loading: killed by signal SIGSEGV",
                               "scale_ctor_hang.so: did not finish loading in 3 s",
                               "scale_good_link.so: the same library as scale_good.so (a link to it)", "scale__twin.so: the name 'scale__twin' contains '__'"})
    EXPECT_NE(run.err.find(expected), std::string::npos) << expected << "\n" << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["ops"][0]["errors"].size(), 9u);
  auto good = e2e::tests_of(r, "scale__scale_good");
  ASSERT_EQ(good.size(), 3u);
  for (const auto& t : good) EXPECT_EQ(t["verdict"], "PASS");
}
