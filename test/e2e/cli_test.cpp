// The command line as a person meets it: --help, --version, repeated flags, case selection,
// --json - for a pipe.
#include <regex>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

TEST(Cli, HelpListsEverySubcommandAndVersionGivesTheCommit) {
  auto help = backendbench({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* cmd : {"backendbench check", "backendbench new-op", "backendbench compare", "backendbench merge", "backendbench resource-spec"})
    EXPECT_NE(help.out.find(cmd), std::string::npos) << cmd << "\n" << help.out;
  // Every option with a value of its own shows it; a sentinel (0: "the default the text says") does not.
  for (const char* shown : {"--min-time FLOAT:a number of 0 or more=0.05", "--test-timeout FLOAT:a number above 0=60", "--timeout FLOAT:a number above 0=2",
                            "--repeat INT:INT in [1 - 100000]=1"})
    EXPECT_NE(help.out.find(shown), std::string::npos) << shown << "\n" << help.out;
  for (const char* hidden : {"--seed UINT=", "1024]=0", "or more=-1"}) EXPECT_EQ(help.out.find(hidden), std::string::npos) << hidden << "\n" << help.out;
  auto version = backendbench({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(std::regex_search(version.out, std::regex(R"(^backendbench \d+\.\d+\.\d+ \(commit ([0-9a-f]{40}|unknown)(, with uncommitted changes)?\)\n$)")))
      << version.out;
}

// --cases by exact id and by glob, --input-id by index; a pattern that selects nothing is an
// error showing what ids look like. A flag given twice takes its last value.
TEST(Cli, CasesAndInputIdsSelectTheCasesThatRun) {
  const std::string root = e2e::fixture_root("hostile");
  auto exact = backendbench({"--custom-ops-root", root, "--impls", "scale_good", "--cases", "correctness/small[n=16]", "--no-log",
                             "--correctness-only"});
  EXPECT_EQ(exact.exit_code, 0) << exact.out << exact.err;
  EXPECT_NE(exact.out.find("\n1 passed, 0 failed, 0 skipped\n"), std::string::npos) << exact.out;

  const auto logs = e2e::temp_dir("logs");
  auto glob = backendbench({"--custom-ops-root", root, "--impls", "scale_good", "--cases", "correctness/*", "--log-dir", logs.string(),
                            "--correctness-only"});
  EXPECT_EQ(glob.exit_code, 0) << glob.out << glob.err;
  const auto results = e2e::read_json(logs / "results.json");
  std::vector<std::string> cases;
  for (const auto& t : e2e::tests_of(results, "scale__scale_good")) cases.push_back(t["case"]);
  EXPECT_EQ(cases, (std::vector<std::string>{"correctness/small[n=16]", "correctness/small[n=1000]"}));
  EXPECT_EQ(results["options"]["cases"], nlohmann::json::array({"correctness/*"}));

  auto index = backendbench({"--custom-ops-root", root, "--impls", "scale_good", "--input-id", "2", "--no-log", "--list"});
  EXPECT_EQ(index.exit_code, 0) << index.out << index.err;
  EXPECT_NE(index.out.find("case:      performance/big\n"), std::string::npos) << index.out;
  EXPECT_EQ(index.out.find("case:      correctness/"), std::string::npos) << index.out;

  auto none = backendbench({"--custom-ops-root", root, "--cases", "correctness/large*", "--no-log"});
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_NE(none.err.find("--cases: correctness/large* matches no case; case ids look like correctness/small[n=16]"), std::string::npos)
      << none.err;
  EXPECT_EQ(none.out.find("correctness 0.0%"), std::string::npos) << none.out;  // no table after an error
  EXPECT_EQ(none.out.find("implementation "), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("exit status 2\n"), std::string::npos) << none.out;

  // A manifest that could not be used has no case to match: --cases says so, with its error
  // (file:line), rather than only that case ids look like none here.
  auto broken = backendbench({"--custom-ops-root", e2e::fixture_root("bad_manifest"), "--cases", "correctness/*", "--no-log"});
  EXPECT_EQ(broken.exit_code, 2) << broken.out << broken.err;
  EXPECT_NE(broken.err.find("broken's cases could not be matched: its manifest could not be used: "), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("gen_input.yaml:10: unknown key 'hgih'"), std::string::npos) << broken.err;

  // --impls twice: the last one counts.
  auto twice = backendbench({"--custom-ops-root", root, "--impls", "scale_wrong", "--impls", "scale_good", "--cases", "correctness/*",
                             "--no-log", "--correctness-only"});
  EXPECT_EQ(twice.exit_code, 0) << twice.out << twice.err;
  EXPECT_EQ(twice.out.find("scale_wrong"), std::string::npos) << twice.out;
}

// --json -: stdout is the JSON document alone; the console goes to stderr. A run that timed
// nothing says no speedup and no perf@p.
TEST(Cli, JsonToStdoutLeavesTheConsoleOnStderr) {
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls", "scale_good", "--json", "-", "--no-log",
                           "--correctness-only"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << run.out;
  EXPECT_EQ(e2e::tests_of(doc, "scale__scale_good").size(), 3u) << run.out;
  EXPECT_NE(run.err.find("\n3 passed, 0 failed, 0 skipped\n"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("correctness 100.0%"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("perf@"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("geomean speedup"), std::string::npos) << run.err;
}
