// backendbench check: what a run would find, with no kernel run; exit 0 usable, 2 not.
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

TEST(Check, TheShippedOpsAreUsableAndItSaysWhatARunWouldUse) {
  auto run = backendbench({"check", BB_SHIPPED_ROOT});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("reference  myop_reference: a library exporting the reference"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("baseline   myop_reference (cpu)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("impl       myop__myop_cpp: cpu; dtypes float32, float64, float16, bfloat16; ABI 1.1"), std::string::npos)
      << run.out;
  // Warnings may come (a baseline named for a device this build has no library for); no error.
  EXPECT_TRUE(std::regex_search(run.out, std::regex(" 0 error\\(s\\), [0-9]+ warning\\(s\\): no kernel was run"))) << run.out;
}

TEST(Check, EveryUnusableLibraryIsNamedWithItsReasonAndTheStatusIs2) {
  auto run = backendbench({"check", e2e::fixture_root("bad_plugins"), "--probe-timeout", "3"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  for (const char* why : {"ABI version 99.0 is not one this host speaks", "crashed while loading", "did not finish loading in 3 s",
                          "unresolved dependency: libbb_fixture_dep.so", "missing symbol: exports neither scale_kernel_impl nor scale_reference",
                          "not a shared library", "undefined symbol", "contains '__'", "a link to it"})
    EXPECT_NE(run.out.find(why), std::string::npos) << why << "\n" << run.out;
  EXPECT_NE(run.out.find("impl       scale__scale_good: cpu"), std::string::npos) << run.out;
}

TEST(Check, AManifestErrorNamesTheFileAndLine) {
  auto run = backendbench({"check", e2e::fixture_root("bad_manifest")});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("broken/gen_input.yaml:[0-9]+: unknown key 'hgih'"))) << run.out;
}

namespace {
// A root of the shipped rmsnorm's reference and C++ implementation, its manifest on the CPU
// only (its baseline the reference); returns the root and the manifest's text for a test to edit.
std::pair<fs::path, std::string> cpu_rmsnorm_root() {
  const auto root = e2e::temp_dir("root");
  fs::create_directories(root / "rmsnorm");
  const fs::path shipped = fs::path(BB_SHIPPED_ROOT) / "rmsnorm";
  for (const char* f : {"rmsnorm_reference.so", "rmsnorm_cpp.so"}) fs::copy_file(shipped / f, root / "rmsnorm" / f);
  std::ifstream in(shipped / "gen_input.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string manifest = std::regex_replace(text.str(), std::regex("devices: \\[[^\\]]*\\]"), "devices: [cpu]");
  manifest = std::regex_replace(manifest, std::regex("baseline: \\{[^}]*\\}"), "baseline: {cpu: reference}");
  return {root, manifest};
}
}  // namespace

// A library for a device the op does not list never runs (an error); one that does not declare
// a dtype the cases use has those cases SKIPPED (a warning that counts them and names some).
TEST(Check, DevicesAndDtypesAreCheckedAgainstTheManifest) {
  // The op on the CPU only, and one sweep in float64 too (rmsnorm_cpp declares float32, float16, bfloat16).
  auto [root, manifest] = cpu_rmsnorm_root();
  const fs::path shipped = fs::path(BB_SHIPPED_ROOT) / "rmsnorm";
  manifest = std::regex_replace(manifest, std::regex("dtype: \\[float32, bfloat16\\]"), "dtype: [float32, float64]");
  std::ofstream(root / "rmsnorm" / "gen_input.yaml") << manifest;
  const fs::path gpu = shipped / "rmsnorm_cuda_block.so";  // built where nvcc is found
  if (fs::exists(gpu)) fs::copy_file(gpu, root / "rmsnorm" / "rmsnorm_cuda_block.so");

  auto run = backendbench({"check", root.string()});
  EXPECT_TRUE(std::regex_search(run.out, std::regex("rmsnorm__rmsnorm_cpp: [1-9][0-9]* of its [0-9]+ case\\(s\\) will be SKIPPED:\n"
                                                    " +[1-9][0-9]* case\\(s\\): dtype float64 of 'x' is not supported by the "
                                                    "implementation \\(it supports float32, float16, bfloat16\\): correctness/")))
      << run.out;
  if (fs::exists(gpu)) {
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_NE(run.out.find("rmsnorm_cuda_block.so: declares devices cuda; the manifest"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("lists cpu: it would never run"), std::string::npos) << run.out;
  } else {
    EXPECT_EQ(run.exit_code, 0) << run.out;
  }
}

// Preconditions and dtypes declared in an info record or the manifest: `check` says which cases
// each implementation will skip and why; a precondition that cannot be evaluated on a case makes
// its library unusable, naming where it was declared.
TEST(Check, SaysWhichCasesEachImplementationWillSkip) {
  auto run = backendbench({"check", "--custom-ops-root", e2e::fixture_root("preconditions")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("impl       scale__scale_vec4_declared: cpu; dtypes float32; preconditions x.0 % 4 == 0; ABI 1.1"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("scale__scale_vec4_declared: 2 of its 5 case(s) will be SKIPPED:\n"
                         "               2 case(s): the implementation's precondition 'x.0 % 4 == 0' does not hold: "
                         "correctness/small[n=7], correctness/small[n=30]"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("scale__scale_vec4_manifest: 2 of its 5 case(s) will be SKIPPED"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("scale__scale_vec4_unsupported: 2 of its"), std::string::npos) << run.out;  // it declares nothing
  EXPECT_EQ(run.out.find("gather__gather_float: "), run.out.find("gather__gather_float: cpu")) << run.out;  // skips none
  EXPECT_NE(run.out.find("gather__gather_int64ids: 2 of its 2 case(s) will be SKIPPED:\n"
                         "               2 case(s): dtype int32 of 'ids' is not supported by the implementation "
                         "(it supports float32, ids:int64)"),
            std::string::npos) << run.out;

  // A precondition naming what no case has.
  const auto root = e2e::temp_dir("root");
  fs::copy(e2e::fixture_root("preconditions"), root, fs::copy_options::recursive);
  std::ifstream in(root / "scale" / "gen_input.yaml");
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::ofstream(root / "scale" / "gen_input.yaml")
      << std::regex_replace(text.str(), std::regex("x.0 % 4 == 0"), "cols % 4 == 0");
  auto bad = backendbench({"check", root.string(), "--ops", "scale"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_TRUE(std::regex_search(bad.out, std::regex("error +\\S*scale/gen_input.yaml:11: precondition 'cols % 4 == 0' of "
                                                    "scale__scale_vec4_manifest: unknown name 'cols' at column 1")))
      << bad.out;
}

// One planning for the run's --list and check (plan_sweep): `check --list` lists what
// `backendbench --list` lists, under the same selection; and check applies the run's rule
// that implementation names are unique across the sweep.
TEST(Check, ListIsTheRunsListing) {
  const std::string root = e2e::fixture_root("preconditions");
  auto listed = backendbench({"--custom-ops-root", root, "--ops", "scale", "--list"});
  auto checked = backendbench({"check", root, "--ops", "scale", "--list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
  ASSERT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  // The lines after each op's heading (its manifest's path is spelt as each was given the root).
  auto body = [](const std::string& out) {
    std::string kept;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("  ", 0) == 0) kept += line + "\n";
    return kept;
  };
  EXPECT_FALSE(body(listed.out).empty()) << listed.out;
  EXPECT_EQ(body(checked.out), body(listed.out));
  auto one = backendbench({"check", root, "--ops", "scale", "--cases", "nothing-like-this", "--list"});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("--cases: nothing-like-this matches no case"), std::string::npos) << one.err;
}

// A backward declared (docs/MANIFEST.md, "Backward") is checked against every case when the op
// is planned; where the reference has no backward to judge one by, the run says which bwd tests
// are judged by finite differences of its forward (and a forward that refuses float64 is each
// one's ERROR, saying so).
TEST(Check, ABackwardIsCheckedWhenPlannedAndSaysWhereNoReferenceBackwardJudgesIt) {
  const auto root = e2e::temp_dir("root");
  fs::create_directories(root / "scale");
  const fs::path forward_only = fs::path(e2e::fixture_root("hostile")) / "scale";  // its reference has no backward
  for (const char* f : {"scale_reference.so", "scale_good.so"}) fs::copy_file(forward_only / f, root / "scale" / f);
  std::ifstream in(fs::path(e2e::fixture_root("backward")) / "scale" / "gen_input.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string manifest = text.str();
  std::ofstream(root / "scale" / "gen_input.yaml") << manifest;
  auto run = backendbench({"check", root.string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("gen_input.yaml:[0-9]+: backward: the reference scale_reference has no backward "
                                                    "\\(scale_backward_reference\\): 3 of 3 bwd cases are checked against central finite "
                                                    "differences of its forward in float64")))
      << run.out;
  // This reference takes float32 alone: the differences cannot be made, and its bwd tests say why.
  fs::copy_file(fs::path(e2e::fixture_root("backward")) / "scale" / "scale_bwd_good.so", root / "scale" / "scale_bwd_good.so");
  const auto logs = e2e::temp_dir("logs");
  auto bwd = backendbench({"--custom-ops-root", root.string(), "--impls", "scale_bwd_good", "--mode", "bwd", "--correctness-only", "--log-dir",
                           logs.string()});
  EXPECT_EQ(bwd.exit_code, 1) << bwd.out << bwd.err;
  const auto results = e2e::read_json(logs / "results.json");
  ASSERT_FALSE(results["tests"].empty());
  for (const auto& t : results["tests"]) {
    EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("finite differences: the reference's forward in float64 failed"), std::string::npos) << t.dump();
  }
  std::ofstream(root / "scale" / "gen_input.yaml") << std::regex_replace(manifest, std::regex("differentiable: \\[x\\]"), "differentiable: [x, y]");
  auto wrong = backendbench({"check", root.string()});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
  EXPECT_NE(wrong.out.find("backward: differentiable: 'y' is not an input"), std::string::npos) << wrong.out;
}
