// Bad manifests and bad command lines: a message that names the problem, exit status 2.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_util.hpp"

using e2e::backendbench;

TEST(ManifestErrors, NameFileLineAndExpectation) {
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("bad_manifest"), "--no-log"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("broken/gen_input.yaml:10: unknown key 'hgih' in uniform; expected one of: low, high"), std::string::npos)
      << run.err;
}

TEST(ManifestErrors, OneBadOpDoesNotStopTheOthers) {
  const auto root = e2e::temp_dir("root");
  std::filesystem::copy(BB_SHIPPED_ROOT, root, std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(root / "aaa_bad");
  std::ofstream(root / "aaa_bad" / "gen_input.yaml") << "op: aaa_bad\ninputs: [x]\noutputs:\n  - {name: y, shape: [x.0, n]}\n"
                                                        "tests: {correctness: [{name: a, inputs: {x: {shape: [3]}}}]}\n";
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--correctness-only"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("aaa_bad/gen_input.yaml:4: shape of output 'y': unknown name 'n'"), std::string::npos) << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_FALSE(e2e::tests_of(r, "myop__myop_cpp").empty());
  EXPECT_FALSE(e2e::tests_of(r, "rmsnorm__rmsnorm_cpp").empty());
}

TEST(CommandLine, BadInputIsStatus2WithAMessage) {
  auto missing = backendbench({"--custom-ops-root", "/nonexistent/root", "--no-log"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/root: not a folder"), std::string::npos) << missing.err;

  auto flag = backendbench({"--no-such-flag"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("--no-such-flag"), std::string::npos) << flag.err;

  auto suite = backendbench({"--suite", "torchbench"});
  EXPECT_EQ(suite.exit_code, 2);

  auto help = backendbench({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--custom-ops-root"), std::string::npos);
}
