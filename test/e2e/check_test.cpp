// backendbench check: what a run would find, with no kernel run; exit 0 usable, 2 not.
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

TEST(Check, TheShippedOpsAreUsableAndItSaysWhatARunWouldUse) {
  auto run = backendbench({"check", BB_SHIPPED_ROOT});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("reference  myop_reference: a library exporting the reference"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("baseline   myop_reference (cpu)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("impl       myop__myop_cpp: cpu; dtypes float32, float64, float16, bfloat16; ABI 1.0"), std::string::npos)
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

// A library for a device the op does not list never runs (an error); one that does not declare
// a dtype the cases use has those cases SKIPPED (a warning that counts them).
TEST(Check, DevicesAndDtypesAreCheckedAgainstTheManifest) {
  const auto root = e2e::temp_dir("root");
  fs::create_directories(root / "rmsnorm");
  const fs::path shipped = fs::path(BB_SHIPPED_ROOT) / "rmsnorm";
  for (const char* f : {"rmsnorm_reference.so", "rmsnorm_cpp.so"}) fs::copy_file(shipped / f, root / "rmsnorm" / f);
  std::ifstream in(shipped / "gen_input.yaml");
  std::stringstream text;
  text << in.rdbuf();
  // The op on the CPU only, and one sweep in float64 too (rmsnorm_cpp declares float32, float16, bfloat16).
  std::string manifest = std::regex_replace(text.str(), std::regex("devices: \\[[^\\]]*\\]"), "devices: [cpu]");
  manifest = std::regex_replace(manifest, std::regex("baseline: \\{[^}]*\\}"), "baseline: {cpu: reference}");
  manifest = std::regex_replace(manifest, std::regex("dtype: \\[float32, bfloat16\\]"), "dtype: [float32, float64]");
  std::ofstream(root / "rmsnorm" / "gen_input.yaml") << manifest;
  const fs::path gpu = shipped / "rmsnorm_cuda_block.so";  // built where nvcc is found
  if (fs::exists(gpu)) fs::copy_file(gpu, root / "rmsnorm" / "rmsnorm_cuda_block.so");

  auto run = backendbench({"check", root.string()});
  EXPECT_NE(run.out.find("rmsnorm__rmsnorm_cpp: does not declare float64"), std::string::npos) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("does not declare float64: [1-9][0-9]* of its [0-9]+ case\\(s\\) will be SKIPPED"))) << run.out;
  if (fs::exists(gpu)) {
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_NE(run.out.find("rmsnorm__rmsnorm_cuda_block: declares devices cuda, the manifest lists cpu: it would never run"),
              std::string::npos) << run.out;
  } else {
    EXPECT_EQ(run.exit_code, 0) << run.out;
  }
}
