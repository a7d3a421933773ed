// Value variants (cases.hpp, value_variants.hpp): bugs that random values miss, found on the
// default cases; the honest shipped implementations pass every variant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "e2e_util.hpp"

using e2e::backendbench;
namespace fs = std::filesystem;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for a scope, then puts it back.
struct bb_env_guard {
  std::string name;
  std::optional<std::string> old;
  bb_env_guard(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    if (value) setenv(n, value, 1);
    else unsetenv(n);
  }
  ~bb_env_guard() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

// The variants (the part after '~') of the cases `impl` got `verdict` on.
std::set<std::string> variants_with(const nlohmann::json& r, const std::string& impl, const std::string& verdict) {
  std::set<std::string> out;
  for (const auto& t : e2e::tests_of(r, impl))
    if (t["verdict"] == verdict) out.insert(t.value("variant", ""));
  return out;
}

}  // namespace

// An RMSNorm that forgot eps and a softmax that does not subtract the row's maximum pass every
// case of manifests as a user first writes them (randn values only: the hole), and fail on the
// default variants: ~tiny and ~zeros for the first, ~huge for the second. Every FAIL names its
// variant; the shipped honest implementations beside them pass every variant.
TEST(ValueVariants, BugsThatRandomValuesMissFailOnTheDefaultCases) {
  const std::vector<std::string> args{"--custom-ops-root", e2e::fixture_root("value_bugs"), "--correctness-only"};
  // The defaults: the other e2e tests run with BACKENDBENCH_VARIANTS=none (e2e_util.cpp).
  const bb_env_guard defaults{"BACKENDBENCH_VARIANTS", nullptr};

  const auto plain_logs = e2e::temp_dir("logs");
  auto plain_args = args;
  plain_args.insert(plain_args.end(), {"--variants", "none", "--log-dir", plain_logs.string()});
  const auto plain = backendbench(plain_args);
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;  // the hole: every randn case passes
  const auto p = e2e::read_json(plain_logs / "results.json");
  EXPECT_EQ(variants_with(p, "rmsnorm__rmsnorm_noeps", "FAIL"), std::set<std::string>{});
  EXPECT_EQ(variants_with(p, "softmax__softmax_nomax", "FAIL"), std::set<std::string>{});
  EXPECT_FALSE(e2e::tests_of(p, "rmsnorm__rmsnorm_noeps").empty());

  const auto logs = e2e::temp_dir("logs");
  auto with_args = args;
  with_args.insert(with_args.end(), {"--log-dir", logs.string()});
  const auto run = backendbench(with_args);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  const auto noeps = variants_with(r, "rmsnorm__rmsnorm_noeps", "FAIL");
  EXPECT_TRUE(noeps.count("tiny")) << "squares below eps";
  EXPECT_TRUE(noeps.count("zeros")) << "0 / 0";
  EXPECT_FALSE(noeps.count("")) << "the manifest's own cases still pass";
  const auto nomax = variants_with(r, "softmax__softmax_nomax", "FAIL");
  EXPECT_TRUE(nomax.count("huge")) << "exp overflows";
  EXPECT_FALSE(nomax.count(""));
  for (const auto& impl : {"rmsnorm__rmsnorm_noeps", "softmax__softmax_nomax"})
    for (const auto& t : e2e::tests_of(r, impl)) {
      if (t["verdict"] != "FAIL") continue;
      const std::string id = t["case"];
      EXPECT_NE(id.find("~" + t.value("variant", std::string("?"))), std::string::npos) << "the verdict names its variant: " << t.dump();
    }
  EXPECT_NE(run.out.find("~tiny"), std::string::npos) << "the console names the variant: " << run.out;
  EXPECT_NE(run.out.find("1 case(s) cannot tell an all-zero output from a right one (every expected value within the tolerance of 0), "
                         "e.g. rmsnorm correctness/faint"),
            std::string::npos)
      << run.out;
  for (const auto& t : e2e::tests_of(r, "rmsnorm__rmsnorm_cpp"))
    EXPECT_EQ(t.value("zeros_would_pass", false), t["case"] == "correctness/faint" || t.value("variant", "") == "zeros" || t.value("variant", "") == "denormal")
        << t.dump();
  EXPECT_NE(run.out.find("NaN or infinite on one side only"), std::string::npos) << "not \"max abs error 0\": " << run.out;
  for (const auto& impl : {"rmsnorm__rmsnorm_cpp", "softmax__softmax_cpp"}) {
    EXPECT_EQ(variants_with(r, impl, "FAIL"), std::set<std::string>{}) << impl;
    EXPECT_EQ(variants_with(r, impl, "PASS"), (std::set<std::string>{"", "zeros", "tiny", "huge", "mixed", "denormal"})) << impl;
  }
}

// The shipped CPU implementations pass every default variant of every correctness case; each
// variant exists for the ops whose inputs are drawn at random; a case whose outputs are all
// within the tolerance of 0 says so (zeros_would_pass), and the manifest's own cases do not. The
// same of their backwards (rmsnorm's, softmax's: bwd tests of every variant).
TEST(ValueVariants, HonestShippedImplementationsPassEveryVariant) {
  const auto logs = e2e::temp_dir("logs");
  const bb_env_guard defaults{"BACKENDBENCH_VARIANTS", nullptr};
  const auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--correctness-only", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  std::set<std::string> seen;
  int zeros_cases = 0;
  for (const auto& t : r["tests"]) {
    if (t["verdict"] == "SKIPPED") continue;
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    const std::string variant = t.value("variant", "");
    seen.insert(variant);
    if (t["op"] == "rmsnorm" && variant.empty()) EXPECT_FALSE(t.value("zeros_would_pass", false)) << t.dump();
    // Its backward's zeros are not zeros out: x of zeros has grad_x = weight * grad_y / sqrt(eps).
    if (t["op"] == "rmsnorm" && variant == "zeros" && t["mode"] == "fwd") {
      EXPECT_TRUE(t.value("zeros_would_pass", false)) << "zeros in, zeros out: " << t.dump();
      ++zeros_cases;
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"", "zeros", "tiny", "huge", "mixed", "denormal"}));
  EXPECT_GT(zeros_cases, 0);
}

// `--variants` takes names; a word that is none of them is the command's error, naming it.
TEST(ValueVariants, AnUnknownVariantIsACommandError) {
  const auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--variants", "tiny,hugh", "--list"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("'hugh' is no value variant"), std::string::npos) << run.err;
  const auto listed = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--variants", "tiny", "--list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("~tiny"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("~zeros"), std::string::npos) << listed.out;
  // BACKENDBENCH_VARIANTS sets the default; the command line wins; a bad one names where it came from.
  {
    const bb_env_guard env{"BACKENDBENCH_VARIANTS", "zeros"};
    const auto by_env = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--list"});
    EXPECT_NE(by_env.out.find("~zeros"), std::string::npos) << by_env.out;
    EXPECT_EQ(by_env.out.find("~tiny"), std::string::npos) << by_env.out;
  }
  {
    const bb_env_guard env{"BACKENDBENCH_VARIANTS", "hugh"};
    const auto bad = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--list"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("(from BACKENDBENCH_VARIANTS)"), std::string::npos) << bad.err;
  }
  const bb_env_guard defaults{"BACKENDBENCH_VARIANTS", nullptr};
  const auto plain = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--ops", "myop", "--list"});
  for (const char* v : {"~zeros", "~tiny", "~huge", "~mixed", "~denormal"}) EXPECT_NE(plain.out.find(v), std::string::npos) << v;
  EXPECT_EQ(plain.out.find("~nan"), std::string::npos);
}
