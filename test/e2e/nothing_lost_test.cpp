// Nothing lost silently (issue 40): what would have had every case of an implementation skipped
// without a word is an error, in `check` and in a run alike, naming what was meant.
#include <gtest/gtest.h>

#include "e2e_util.hpp"

using e2e::backendbench;

// A Python file whose function is a near miss of scale_kernel_impl is an error too, naming both.
// Info records with a misspelt device ("cpus") or dtype ("bfloat"), and one naming a device the
// manifest does not list: each implementation is unusable with the reason and the nearest name;
// the right one beside them still runs and passes; the run exits 2 as `check` does.
TEST(NothingLost, AnInfoRecordsTypoIsAnErrorInCheckAndInARun) {
  const auto root = e2e::fixture_root("lost");
  const auto check = backendbench({"check", root});
  EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
  EXPECT_EQ(check.out.find("helpers.py"), std::string::npos) << "a helper module is left alone: " << check.out;
  for (const char* want : {"scale_devtypo.so: its info record: device 'cpus' is no device (did you mean 'cpu'?), expected cpu, cuda or hip",
                           "scale_dtypetypo.so: its info record: dtype 'bfloat' is no dtype (did you mean 'bfloat16'?)",
                           "scale_cudaonly.so: declares devices cuda; the manifest", "lists cpu: it would never run",
                           "scale_misnamed.py: defines 'scale_kernel_imp', not 'scale_kernel_impl': it is no implementation as it is"})
    EXPECT_NE(check.out.find(want), std::string::npos) << want << "\n" << check.out;

  const auto logs = e2e::temp_dir("logs");
  const auto run = backendbench({"--custom-ops-root", root, "--correctness-only", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  const std::string said = run.out + run.err;
  for (const char* want : {"did you mean 'cpu'?", "did you mean 'bfloat16'?", "it would never run", "defines 'scale_kernel_imp'"})
    EXPECT_NE(said.find(want), std::string::npos) << want << "\n" << said;
  const auto r = e2e::read_json(logs / "results.json");
  const auto good = e2e::tests_of(r, "scale__scale_good");
  ASSERT_EQ(good.size(), 2u);
  for (const auto& t : good) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  for (const char* impl : {"scale__scale_devtypo", "scale__scale_dtypetypo", "scale__scale_cudaonly"})
    EXPECT_TRUE(e2e::tests_of(r, impl).empty()) << impl << " has no tests: it is an error, not a row of skips";
}

// A run whose tests were partly SKIPPED exits 0 (a CPU machine skips the GPU implementations);
// --fail-on-skip PERCENT makes more skips than that share a failing status, and says why.
TEST(NothingLost, FailOnSkipTurnsMissingCoverageIntoAFailingStatus) {
  const auto root = e2e::fixture_root("preconditions");  // scale_vec4_*: some cases are not a multiple of 4
  const std::vector<std::string> base{"--custom-ops-root", root, "--ops", "scale", "--impls", "scale_vec4_declared", "--correctness-only"};
  const auto plain = backendbench(base);
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  auto strict = base;
  strict.insert(strict.end(), {"--fail-on-skip", "0"});
  const auto failed = backendbench(strict);
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  const std::string said = failed.out + failed.err;
  EXPECT_NE(said.find("tests SKIPPED"), std::string::npos) << said;
  EXPECT_NE(said.find("more than --fail-on-skip 0% allows: exit status 1"), std::string::npos) << said;
  auto loose = base;
  loose.insert(loose.end(), {"--fail-on-skip", "90"});
  EXPECT_EQ(backendbench(loose).exit_code, 0);
  auto bad = base;
  bad.insert(bad.end(), {"--fail-on-skip", "150"});
  EXPECT_EQ(backendbench(bad).exit_code, 2);
}
