// One reference per op (docs/RUNNING.md, "What happens"): a second library exporting
// <op>_reference cannot take the reference over by sorting first; the manifest's `reference:`
// names the trusted one; a library that is the reference is not scored against itself.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

namespace {

std::vector<std::string> args(const fs::path& root, const fs::path& logs) {
  return {"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--correctness-only"};
}

// A copy of the fixture root `name` whose manifest gets `line` appended; returns the root and
// sets `line_no` to the line it landed on.
fs::path root_with_manifest_line(const std::string& name, const std::string& line, int& line_no) {
  const auto root = e2e::temp_dir("root");
  fs::copy(e2e::fixture_root(name), root, fs::copy_options::recursive);
  const auto manifest = root / "scale" / "gen_input.yaml";
  std::stringstream text;
  text << std::ifstream(manifest).rdbuf();
  const std::string s = text.str();
  line_no = static_cast<int>(std::count(s.begin(), s.end(), '\n')) + 1;
  std::ofstream(manifest, std::ios::app) << line << "\n";
  return root;
}

}  // namespace

// scale_aaa_hijack.so exports scale_reference (y = 3x) and sorts before scale_reference.so: it
// used to serve as the reference with a warning, failing every correct implementation.
TEST(OneReference, TwoLibrariesExportingTheReferenceAreAnErrorNamingEach) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("one_ref_two"), logs));
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("2 libraries export scale_reference: scale_aaa_hijack.so, scale_reference.so"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("reference: FILE"), std::string::npos) << run.err;  // says how to choose
  auto r = e2e::read_json(logs / "results.json");
  ASSERT_EQ(r["ops"].size(), 1u);
  ASSERT_EQ(r["ops"][0]["errors"].size(), 1u);
  EXPECT_NE(r["ops"][0]["errors"][0].get<std::string>().find("scale_aaa_hijack.so"), std::string::npos);
  EXPECT_TRUE(r["tests"].empty()) << "nothing is checked against a reference that may be the wrong one";
}

// `reference: FILE` names the trusted library; another library exporting both functions is
// then an implementation like any other (and the hijacker's fails).
TEST(OneReference, TheManifestNamesTheTrustedOne) {
  for (const std::string name : {"scale_reference", "scale_reference.so"}) {
    int line = 0;
    const auto root = root_with_manifest_line("one_ref_two", "reference: " + name, line);
    const auto logs = e2e::temp_dir("logs");
    auto run = backendbench(args(root, logs));
    EXPECT_EQ(run.exit_code, 1) << name << "\n" << run.out << run.err;  // the hijacker fails
    auto r = e2e::read_json(logs / "results.json");
    ASSERT_EQ(r["ops"].size(), 1u);
    EXPECT_EQ(r["ops"][0]["reference"], "scale_reference");
    EXPECT_EQ(r["ops"][0]["reference_kind"], "library");
    EXPECT_TRUE(r["ops"][0]["errors"].empty()) << r["ops"][0].dump();
    const auto good = e2e::tests_of(r, "scale__scale_good"), hijack = e2e::tests_of(r, "scale__scale_aaa_hijack");
    ASSERT_EQ(good.size(), 3u);
    ASSERT_EQ(hijack.size(), 3u);
    for (const auto& t : good) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    for (const auto& t : hijack) EXPECT_EQ(t["verdict"], "FAIL") << t.dump();
  }
}

TEST(OneReference, AReferenceFileThatIsNoLibraryIsAManifestErrorWithTheLine) {
  int line = 0;
  const auto root = root_with_manifest_line("one_ref_two", "reference: scale_nosuch", line);
  auto run = backendbench({"--custom-ops-root", root.string(), "--no-log", "--correctness-only"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  const auto where = (root / "scale" / "gen_input.yaml").string() + ":" + std::to_string(line) + ": reference 'scale_nosuch'";
  EXPECT_NE(run.err.find(where), std::string::npos) << where << "\n" << run.err;
  EXPECT_NE(run.err.find("scale_aaa_hijack.so, scale_reference.so"), std::string::npos) << run.err;  // what it could name

  // A library that exists but does not export the reference cannot be named either.
  const auto root2 = root_with_manifest_line("one_ref_two", "reference: scale_good", line);
  auto good = backendbench({"--custom-ops-root", root2.string(), "--no-log", "--correctness-only"});
  EXPECT_EQ(good.exit_code, 2) << good.out << good.err;
  EXPECT_NE(good.err.find(":" + std::to_string(line) + ": reference 'scale_good': scale_good.so does not export scale_reference"),
            std::string::npos)
      << good.err;

  // A path is no file name: the reference comes from the op's own folder.
  const auto root3 = root_with_manifest_line("one_ref_two", "reference: ../elsewhere/scale_reference.so", line);
  auto path = backendbench({"--custom-ops-root", root3.string(), "--no-log", "--correctness-only"});
  EXPECT_EQ(path.exit_code, 2) << path.out << path.err;
  EXPECT_NE(path.err.find(":" + std::to_string(line) + ": reference: '../elsewhere/scale_reference.so' is not a file name"),
            std::string::npos)
      << path.err;
}

// scale_both.so exports scale_kernel_impl and scale_reference and is the folder's only
// reference: it serves, and its implementation is not scored against itself (it used to pass
// every case against itself).
TEST(OneReference, ALibraryServingAsReferenceIsNotScoredAgainstItself) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench(args(e2e::fixture_root("one_ref_self"), logs));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("scale_both.so exports both scale_kernel_impl and scale_reference"), std::string::npos) << run.err;
  auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["ops"][0]["reference"], "scale_both");
  EXPECT_EQ(r["ops"][0]["reference_kind"], "library");
  EXPECT_EQ(r["ops"][0]["implementations"], nlohmann::json::array({"scale__scale_good"}));
  EXPECT_TRUE(e2e::tests_of(r, "scale__scale_both").empty());
  const auto good = e2e::tests_of(r, "scale__scale_good");
  ASSERT_EQ(good.size(), 3u);
  for (const auto& t : good) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
}
