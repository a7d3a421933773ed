// --json/--junit/--csv/--md/--html F write a copy of that report to F, beside the log dir's own
// (docs/RUNNING.md): the log dir always holds every report.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
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

// What an implementation prints is filed under the test that printed it, survives its crash,
// and is shown where its failure is: the console, JUnit's <system-out>, the HTML report.
TEST(PluginOutput, EachTestHoldsWhatItPrintedAndACrashKeepsItsLastWords) {
  const auto logs = e2e::temp_dir("logs");
  auto run = e2e::backendbench({"--custom-ops-root", e2e::fixture_root("output"), "--log-dir", logs.string(), "--correctness-only"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto results = e2e::read_json(logs / "results.json");
  std::map<std::string, nlohmann::json> by_case;
  for (const auto& t : e2e::tests_of(results, "scale__scale_chatty")) by_case[t["case"]] = t;
  ASSERT_EQ(by_case.size(), 3u) << results.dump();
  for (const auto& [c, t] : by_case) {
    const std::string n = c == "performance/big" ? "4096" : c == "correctness/small[n=16]" ? "16" : "1000";
    const std::string out = t.value("output", "");
    EXPECT_NE(out.find("chatty printf: n=" + n + "\n"), std::string::npos) << c << ": " << out;
    EXPECT_NE(out.find("chatty cout: n=" + n + "\n"), std::string::npos) << c << ": " << out;
    for (const char* other : {"16", "1000", "4096"})  // nothing of another test's
      if (other != n) EXPECT_EQ(out.find(std::string("n=") + other + "\n"), std::string::npos) << c << ": " << out;
  }
  const auto crash = by_case["correctness/small[n=1000]"];
  EXPECT_EQ(crash["verdict"], "CRASH") << crash.dump();
  EXPECT_NE(crash.value("output", "").find("chatty: about to crash at n=1000\n"), std::string::npos) << crash.dump();
  // Shown where the failure is shown.
  EXPECT_NE(run.out.find("      it printed ("), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("      | chatty: about to crash at n=1000"), std::string::npos) << run.out;
  std::ifstream junit(logs / "junit.xml");
  std::stringstream xml;
  xml << junit.rdbuf();
  EXPECT_NE(xml.str().find("<system-out>printed ("), std::string::npos) << xml.str();
  EXPECT_NE(xml.str().find("chatty: about to crash at n=1000"), std::string::npos) << xml.str();
  std::ifstream html(logs / "report.html");
  std::stringstream page;
  page << html.rdbuf();
  EXPECT_NE(page.str().find("<details class=\"printed\"><summary>it printed "), std::string::npos);
  EXPECT_NE(page.str().find("chatty: about to crash at n=1000"), std::string::npos);
}
