// Bad manifests and bad command lines: a message that names the problem, exit status 2.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

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

// The corpus of malformed manifests (test/fixtures/bad_manifests): each, as an op's manifest,
// is exit status 2 with a message naming the file, the line and what was expected.
TEST(ManifestErrors, EveryManifestOfTheMalformedCorpus) {
  const std::map<std::string, std::string> expected = {
      {"attr_wrong_type", ":5: eps: expected a number, got 'tiny'"},
      {"case_device_unknown", ":11: case device 'rocm' is not among the op's devices (cpu, cuda)"},
      {"bytes_bad_expr", ":7: bytes: expected ')' after the argument of sizeof at column 19"},
      {"duplicate_input", ":4: input 'x' is declared twice"},
      {"empty_file", ":1: expected a mapping at the top level"},
      {"huge_dimension", ":9: shape of input 'x': '99999999999999999999' evaluates to 1e+20, expected a non-negative integer"},
      {"no_inputs", ":1: expected 'inputs:' with a list of at least one tensor"},
      {"no_tests", ":1: expected 'tests:' with 'correctness:' and/or 'performance:'"},
      {"npy_absolute", ":9: npy: '/etc/passwd' leaves the op's folder; expected a path inside it"},
      {"npy_escape", ":9: npy: '../../secret.npy' leaves the op's folder; expected a path inside it"},
      {"output_unknown_input", ":5: output 'y': shape 'w' is not an input; expected an input name or a list"},
      {"params_empty", ":9: parameter 'n': expected at least one value"},
      {"seed_not_number", ":2: seed: expected a number, got 'lots'"},
      {"seed_huge", ":2: seed: expected a non-negative integer (below 2^63)"},  // found by the fuzzer
      {"shape_syntax", ":9: shape of input 'x': expected a number, a name or '(' at column 4 of 'n *'"},
      {"tolerance_negative", ":7: tolerances must be non-negative"},
      {"unknown_dtype", ":3: dtype 'float33' of input 'x' (did you mean 'float32'?): expected a dtype"},
      {"unknown_init", ":9: unknown initialiser 'gaussian'; expected an initialiser"},
      {"unknown_key", ":7: unknown key 'colour' in the manifest; expected one of: op,"},
      {"unknown_param", ":9: shape of input 'x': unknown name 'rows' at column 1"},
      {"wrong_op", ":1: op is 'good' but the folder is 'bad'; expected them to match"},
      {"yaml_syntax", ":9:39: invalid YAML: illegal flow end"},
  };
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BB_SOURCE_DIR) + "/test/fixtures/bad_manifests")) {
    const std::string name = entry.path().stem().string();
    seen.insert(name);
    ASSERT_TRUE(expected.count(name)) << name << ": a corpus manifest with no expected message here";
    const auto root = e2e::temp_dir("root_" + name);
    std::filesystem::create_directories(root / "bad");
    std::filesystem::copy_file(entry.path(), root / "bad" / "gen_input.yaml");
    auto run = backendbench({"--custom-ops-root", root.string(), "--no-log", "--correctness-only"});
    EXPECT_EQ(run.exit_code, 2) << name << "\n" << run.err;
    EXPECT_NE(run.err.find("bad/gen_input.yaml" + expected.at(name)), std::string::npos) << name << "\n" << run.err;
  }
  EXPECT_EQ(seen.size(), expected.size());
}

// A manifest never makes the host run anything, and its paths stay in the op's folder: a link
// inside the folder that points out of it is refused when the input is read.
TEST(Confinement, ALinkOutOfTheOpsFolderIsRefused) {
  const auto root = e2e::temp_dir("root");
  std::filesystem::copy(e2e::fixture_root("inplace"), root, std::filesystem::copy_options::recursive);
  const auto data = root / "addone_" / "data" / "x.npy";
  ASSERT_TRUE(std::filesystem::exists(data));
  const auto outside = e2e::temp_dir("outside");
  std::filesystem::copy_file(data, outside / "x.npy");
  std::filesystem::remove(data);
  std::filesystem::create_symlink(outside / "x.npy", data);
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--correctness-only"});
  EXPECT_EQ(run.exit_code, 1);
  int refused = 0;
  const auto results = e2e::read_json(logs / "results.json");
  for (const auto& t : results["tests"])
    if (t["case"] == "correctness/from_file") {
      ++refused;
      EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
      EXPECT_NE(t["message"].get<std::string>().find("leaves the op's folder"), std::string::npos) << t.dump();
    }
  EXPECT_EQ(refused, 3);  // one per implementation
}
