// --json/--junit/--csv/--md/--html F write a copy of that report to F, beside the log dir's own
// (docs/RUNNING.md): the log dir always holds every report.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

namespace {
std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(ReportCopies, EachFlagsFileIsACopyBesideTheLogDirsOwn) {
  const auto logs = e2e::temp_dir("logs"), copies = e2e::temp_dir("copies");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("prec_library"), "--impls", "scale_alpha", "--correctness-only",
                           "--log-dir", logs.string(), "--json", (copies / "r.json").string(), "--junit", (copies / "r.xml").string(),
                           "--csv", (copies / "r.csv").string(), "--md", (copies / "r.md").string(), "--html", (copies / "r.html").string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::pair<const char*, const char*> pairs[] = {{"results.json", "r.json"},
                                                       {"junit.xml", "r.xml"},
                                                       {"operator_summary.csv", "r.csv"},
                                                       {"OVERALL_SUMMARY.md", "r.md"},
                                                       {"report.html", "r.html"}};
  for (const auto& [own, copy] : pairs) {
    ASSERT_TRUE(fs::exists(logs / own)) << own << ": the log dir lost its own copy";
    ASSERT_TRUE(fs::exists(copies / copy)) << copy;
    EXPECT_FALSE(bytes_of(logs / own).empty()) << own;
    EXPECT_EQ(bytes_of(logs / own), bytes_of(copies / copy)) << own << " and " << copy << " differ";
  }
  EXPECT_EQ(e2e::read_json(logs / "results.json")["tests"].size(), 3u);

  // With --no-log, the flag's file alone.
  const auto alone = e2e::temp_dir("alone");
  auto nolog = backendbench({"--custom-ops-root", e2e::fixture_root("prec_library"), "--impls", "scale_alpha", "--correctness-only",
                             "--no-log", "--junit", (alone / "only.xml").string()});
  EXPECT_EQ(nolog.exit_code, 0) << nolog.out << nolog.err;
  EXPECT_TRUE(fs::exists(alone / "only.xml"));
  EXPECT_EQ(std::distance(fs::directory_iterator(alone), fs::directory_iterator()), 1);
}
