// docs/adding-an-op.md, followed as written: BackendBench installed into a prefix (the page's
// setup block, less `scripts/build.sh`: this build is the one installed), then the tutorial's
// commands run by bash in an empty folder: new-op, an out-of-tree CMake build against the
// installed package, the run. The verdicts are read from the run's results.
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace fs = std::filesystem;

namespace {

// The shell block that follows `<!-- marker -->` in the page.
std::string block_after(const std::string& page, const std::string& marker) {
  const auto at = page.find("<!-- " + marker + " -->");
  if (at == std::string::npos) return {};
  const auto open = page.find("```sh\n", at);
  const auto close = page.find("\n```", open + 6);
  if (open == std::string::npos || close == std::string::npos) return {};
  return page.substr(open + 6, close - open - 6);
}

}  // namespace

TEST(Tutorial, AddingAnOpAsTheDocsSayGivesAVerdict) {
  std::ifstream in(fs::path(BB_SOURCE_DIR) / "docs" / "adding-an-op.md");
  std::stringstream page;
  page << in.rdbuf();
  std::string setup = block_after(page.str(), "setup");
  const std::string tutorial = block_after(page.str(), "tutorial");
  ASSERT_FALSE(setup.empty()) << "docs/adding-an-op.md has no setup block";
  ASSERT_FALSE(tutorial.empty()) << "docs/adding-an-op.md has no tutorial block";
  // The setup, run in this build's source tree, less the packages and the build itself (this
  // build is it, its packages installed).
  ASSERT_NE(setup.find("scripts/install_deps.sh"), std::string::npos) << setup;
  ASSERT_NE(setup.find("scripts/build.sh"), std::string::npos) << setup;
  setup = std::regex_replace(setup, std::regex("scripts/(install_deps|build).sh[^\n]*\n"), "");

  const auto home = e2e::temp_dir("home"), work = e2e::temp_dir("work");
  const std::string script = "set -euo pipefail\nexport HOME='" + home.string() + "'\ncd '" + BB_SOURCE_DIR + "'\n" +
                             "cmake() { '" + BB_CMAKE + "' \"$@\"; }\n" +
                             // `cmake --install build` installs the build under test.
                             std::regex_replace(setup, std::regex("--install build "), std::string("--install '") + BB_BUILD_DIR + "' ") + "\n" +
                             "cd '" + work.string() + "'\n" + tutorial;
  auto run = e2e::run_program({"/bin/bash", "-c", script}, 540);
  ASSERT_EQ(run.exit_code, 0) << script << "\n--- stdout\n" << run.out << "\n--- stderr\n" << run.err;

  // What new-op wrote, and the verdicts of the run the last command made.
  for (const char* f : {"gen_input.yaml", "demo_reference.cpp", "demo_cpp.cpp", "demo_cuda.cu", "CMakeLists.txt"})
    EXPECT_TRUE(fs::exists(work / "demo" / f)) << f;
  EXPECT_NE(run.out.find("demo__demo_cpp"), std::string::npos) << run.out;
  fs::path results;
  for (const auto& e : fs::recursive_directory_iterator(work / "bb-logs"))
    if (e.path().filename() == "results.json") results = e.path();
  ASSERT_FALSE(results.empty()) << "the run wrote no results under bb-logs/";
  const auto r = e2e::read_json(results);
  const auto cpp = e2e::tests_of(r, "demo__demo_cpp");
  EXPECT_EQ(cpp.size(), 6u);
  for (const auto& t : cpp) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  for (const auto& t : e2e::tests_of(r, "demo__demo_cuda")) EXPECT_TRUE(t["verdict"] == "PASS" || t["verdict"] == "SKIPPED") << t.dump();
  EXPECT_EQ(r["scores"]["implementations"][0]["fully_correct"], true) << r["scores"].dump();

  // The op went into its own build tree, its manifest a link to the source; the installed root
  // (the shipped ops) was left alone.
  EXPECT_TRUE(fs::exists(work / "demo" / "build" / "custom_ops" / "demo" / "demo_cpp.so"));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(work / "demo" / "build" / "custom_ops" / "demo" / "gen_input.yaml")));
  EXPECT_FALSE(fs::exists(home / ".local" / "share" / "backendbench" / "custom_ops" / "demo"));
  EXPECT_TRUE(fs::exists(home / ".local" / "share" / "backendbench" / "custom_ops" / "myop" / "gen_input.yaml"));

  // --backward: the backward too, as written it passes both passes (the GPU's note said).
  const std::string bin = (home / ".local" / "bin").string();
  auto bwd = e2e::run_program({"/bin/bash", "-c", "set -euo pipefail\nexport HOME='" + home.string() + "' PATH='" + bin + "':$PATH\ncd '" + work.string() +
                                                      "'\nbackendbench new-op demo_bwd --backward --devices cpu,cuda\n'" + BB_CMAKE +
                                                      "' -S demo_bwd -B demo_bwd/build > /dev/null\n'" + BB_CMAKE + "' --build demo_bwd/build > /dev/null\n"
                                                      "backendbench --custom-ops-root demo_bwd/build/custom_ops --ops demo_bwd --correctness-only "
                                                      "--log-dir bwd-logs\n"},
                              300);
  ASSERT_EQ(bwd.exit_code, 0) << bwd.out << bwd.err;
  EXPECT_NE(bwd.err.find("the GPU ones have none"), std::string::npos) << bwd.err;
  const auto b = e2e::read_json(work / "bwd-logs" / "results.json");
  int backward_passes = 0;
  for (const auto& t : e2e::tests_of(b, "demo_bwd__demo_bwd_cpp")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    backward_passes += t["mode"] == "bwd";
  }
  EXPECT_EQ(backward_passes, 6);
  for (const auto& t : e2e::tests_of(b, "demo_bwd__demo_bwd_cuda"))
    if (t["mode"] == "bwd") EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();

  // new-op never overwrites.
  auto again = e2e::run_program({(home / ".local" / "bin" / "backendbench").string(), "new-op", "demo", "--root", work.string()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("never overwrites"), std::string::npos) << again.err;
  auto bad = e2e::backendbench({"new-op", "Bad__name", "--root", work.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("is no op name"), std::string::npos) << bad.err;
}
