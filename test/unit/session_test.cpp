// run_session end to end with fake workers (fake_executor.hpp) given through its ExecutorFactory:
// discovery, planning (the probes answered by the fake), the device probe, jobs, the worker pool,
// the reporters' events and the exit status, over a temporary custom-ops root whose "libraries"
// no process ever loads.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fake_executor.hpp"
#include "report/reporter.hpp"
#include "run/session.hpp"
#include "sweep_options.hpp"
#include "temp_ops_root.hpp"

namespace {

using bb_fake::Answer;
using bb_fake::FakeWorkers;
using bb_fake::Kernel;
using bb_fake::Match;
using bb_fake::Request;

const std::vector<std::string> kCases = {"correctness/small[n=16]", "correctness/small[n=100]", "performance/big"};

// Every event, in the order the session gave them.
class Recorder final : public bb::Reporter {
 public:
  void run_started(const bb::RunRecord&) override { events.push_back("run_started"); }
  void op_planned(const bb::OpReport& r) override {
    events.push_back("op_planned " + r.op);
    ops.push_back(r);
  }
  void device_described(const bb::DeviceKind& d) override {
    events.push_back("device_described " + d.name);
    devices.push_back(d.reply);
  }
  void sweep_planned(const bb::RunRecord& info, std::size_t total) override {
    events.push_back("sweep_planned " + std::to_string(total));
    sweep_id = info.sweep_id;
  }
  void impl_skipped(const std::string& impl, const std::string& device, const std::string& reason) override {
    events.push_back("impl_skipped " + impl + " " + device);
    skip_reasons.push_back(reason);
  }
  void test_started(const bb::TestResult& r) override { events.push_back("test_started " + r.id.impl + " " + r.id.case_id); }
  void test_finished(const bb::TestResult& r, std::size_t done, std::size_t total) override {
    events.push_back("test_finished " + r.id.impl + " " + r.id.case_id + " " + bb::verdict_name(r.outcome.verdict));
    finished.push_back(r);
    counts.emplace_back(done, total);
  }
  void warning(const std::string& text) override { warnings.push_back(text); }
  void run_finished(const bb::RunRecord& s) override {
    events.push_back("run_finished");
    summary = s;
  }

  std::vector<std::string> events, warnings, skip_reasons;
  std::vector<bb::OpReport> ops;
  std::vector<nlohmann::json> devices;
  std::vector<bb::TestResult> finished;
  std::vector<std::pair<std::size_t, std::size_t>> counts;
  std::string sweep_id;
  std::optional<bb::RunRecord> summary;
};

// The processes whose parent is this one.
std::vector<long> children() {
  std::vector<long> out;
  const long self = static_cast<long>(getpid());
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == self) out.push_back(std::stol(name));
  }
  return out;
}

class Session : public ::testing::Test {
 protected:
  void SetUp() override {
    // The run keeps a copy of each library by its hash (library_store.hpp): here, in the test's root.
    if (const char* old = std::getenv("BACKENDBENCH_CACHE_DIR")) saved_cache_ = old;
    ::setenv("BACKENDBENCH_CACHE_DIR", (root.dir / "cache").c_str(), 1);
    options.root = root.dir;
    options.isolate = false;
    options.performance = false;
    options.test_timeout = 10;
  }
  void TearDown() override {
    if (saved_cache_) ::setenv("BACKENDBENCH_CACHE_DIR", saved_cache_->c_str(), 1);
    else ::unsetenv("BACKENDBENCH_CACHE_DIR");
  }

  int run() {
    bb::RunRecord info;
    info.root = root.dir.string();
    info.options = bb::session_options_json(options);
    return bb::run_session(options, info, {&rec}, fake->factory());
  }

  // The events of tests that all run, one after the other: each started, then finished.
  static std::vector<std::string> run_in_order(const std::vector<std::pair<std::string, std::string>>& tests,
                                               const std::map<std::string, std::string>& verdicts = {}) {
    std::vector<std::string> e;
    for (const auto& [impl, c] : tests) {
      e.push_back("test_started " + impl + " " + c);
      auto v = verdicts.find(impl + " " + c);
      e.push_back("test_finished " + impl + " " + c + " " + (v == verdicts.end() ? "PASS" : v->second));
    }
    return e;
  }

  TempOpsRoot root;
  std::shared_ptr<FakeWorkers> fake = FakeWorkers::create();
  bb::SessionOptions options = no_variants();  // sweep_options.hpp
  Recorder rec;

 private:
  std::optional<std::string> saved_cache_;
};

std::vector<std::pair<std::string, std::string>> sweep(const std::vector<std::string>& impls) {
  std::vector<std::pair<std::string, std::string>> t;
  for (const auto& i : impls)
    for (const auto& c : kCases) t.emplace_back(i, c);
  return t;
}

}  // namespace

TEST_F(Session, EventsArriveInOrderAndEveryPlannedTestGetsOneResultInSweepOrder) {
  root.add_op("alpha", {"alpha_good.so", "alpha_reference.so"});
  root.add_op("beta", {"beta_fast.so", "beta_good.so", "beta_reference.so"});
  const auto tests = sweep({"alpha__alpha_good", "beta__beta_fast", "beta__beta_good"});

  ASSERT_EQ(run(), 0);

  std::vector<std::string> want = {"run_started", "op_planned alpha", "op_planned beta", "sweep_planned 9"};
  for (const auto& e : run_in_order(tests)) want.push_back(e);
  want.push_back("run_finished");
  EXPECT_EQ(rec.events, want);
  // done / total count up as the results come.
  for (std::size_t k = 0; k < rec.counts.size(); ++k) EXPECT_EQ(rec.counts[k], std::make_pair(k + 1, std::size_t{9}));
  ASSERT_TRUE(rec.summary.has_value());
  EXPECT_EQ(rec.summary->exit_code, 0);
  ASSERT_EQ(rec.summary->tests.size(), tests.size());
  for (std::size_t k = 0; k < tests.size(); ++k) {
    const auto& r = rec.summary->tests[k];
    EXPECT_EQ(std::make_pair(r.id.impl, r.id.case_id), tests[k]) << "result " << k << " out of sweep order";
    EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
    EXPECT_EQ(r.id.device, "cpu");
  }
  ASSERT_EQ(rec.summary->ops.size(), 2u);
  EXPECT_EQ(rec.summary->ops[1].reference, "beta_reference");
  EXPECT_FALSE(rec.sweep_id.empty());

  // Every request went to the fake, and no worker was started beside it: each library probed,
  // each test prepared, by executors of the given factory; no child process is left. (Not "none
  // was ever forked": where the host is root, walls_for() runs the sandbox probe once per
  // process, isolate or not, which forks a short-lived child: sandbox.cpp, can_make_namespaces.)
  std::multiset<std::string> probed;
  for (const auto& r : fake->requests("probe")) probed.insert(r.library);
  EXPECT_EQ(probed, (std::multiset<std::string>{"alpha_good.so", "alpha_reference.so", "beta_fast.so", "beta_good.so", "beta_reference.so"}));
  const auto impl_prepares = fake->requests([](const Request& r) { return r.cmd == "prepare" && r.role == "impl"; });
  EXPECT_EQ(impl_prepares.size(), tests.size());
  EXPECT_GE(fake->made(), 4) << "the planner's worker, then the slot's implementation, reference and baseline workers";
  EXPECT_TRUE(children().empty());
}

TEST_F(Session, OneFailingTestMakesTheExitStatusOne) {
  root.add_op("beta", {"beta_fast.so", "beta_good.so", "beta_reference.so"});
  fake->on({.cmd = "call", .library = "beta_fast.so", .case_id = "correctness/small[n=100]"}, Answer::computing(Kernel::wrong));
  EXPECT_EQ(run(), 1);
  const auto tests = sweep({"beta__beta_fast", "beta__beta_good"});
  std::vector<std::string> want = {"run_started", "op_planned beta", "sweep_planned 6"};
  for (const auto& e : run_in_order(tests, {{"beta__beta_fast correctness/small[n=100]", "FAIL"}})) want.push_back(e);
  want.push_back("run_finished");
  EXPECT_EQ(rec.events, want);
  ASSERT_TRUE(rec.summary.has_value());
  EXPECT_EQ(rec.summary->exit_code, 1);
}

TEST_F(Session, AnImplementationThatCrashesIsNoPassEither) {
  root.add_op("beta", {"beta_good.so", "beta_reference.so"});
  fake->on({.cmd = "call", .library = "beta_good.so", .case_id = "performance/big"}, Answer::crash());
  EXPECT_EQ(run(), 1);
  ASSERT_EQ(rec.finished.size(), 3u);
  EXPECT_EQ(rec.finished[2].outcome.verdict, bb::Verdict::crash);
  EXPECT_EQ(rec.finished[2].outcome.message, "killed by signal SIGSEGV (Segmentation fault)");
}

TEST_F(Session, ALibraryWhoseProbeFailsMakesTheExitStatusTwo) {
  root.add_op("alpha", {"alpha_good.so", "alpha_reference.so"});
  root.add_op("beta", {"beta_good.so", "beta_odd.so", "beta_reference.so"});
  fake->on({.cmd = "probe", .library = "alpha_good.so"}, Answer::crash());
  fake->library("beta_odd.so", {.kernel_impl = false, .reference = false, .info = {}, .error = "beta_odd.so: undefined symbol: cblas_sgemm"});

  EXPECT_EQ(run(), 2);
  // The other tests run, and pass.
  std::vector<std::string> want = {"run_started", "op_planned alpha", "op_planned beta", "sweep_planned 3"};
  for (const auto& e : run_in_order(sweep({"beta__beta_good"}))) want.push_back(e);
  want.push_back("run_finished");
  EXPECT_EQ(rec.events, want);
  ASSERT_EQ(rec.ops.size(), 2u);
  ASSERT_EQ(rec.ops[0].errors.size(), 1u);
  EXPECT_NE(rec.ops[0].errors[0].find("alpha_good.so: crashed while loading: killed by signal SIGSEGV"), std::string::npos)
      << rec.ops[0].errors[0];
  EXPECT_TRUE(rec.ops[0].impls.empty());
  EXPECT_EQ(rec.ops[1].errors, std::vector<std::string>{"beta_odd.so: undefined symbol: cblas_sgemm"});
  EXPECT_EQ(rec.ops[1].impls, std::vector<std::string>{"beta__beta_good"});
  ASSERT_TRUE(rec.summary.has_value());
  EXPECT_EQ(rec.summary->exit_code, 2);
}

TEST_F(Session, AnImplementationForAMissingDeviceIsSkippedAsTheDeviceProbeSays) {
  std::string yaml = kTwiceManifest;
  yaml.replace(yaml.find("seed: 11\n"), 9, "seed: 11\ndevices: [cpu, cuda]\n");
  root.add_op("gamma", {"gamma_cuda.so", "gamma_good.so", "gamma_reference.so"}, yaml);
  bb::PluginInfo cuda;
  cuda.present = true;
  cuda.devices = {"cuda"};
  fake->library("gamma_cuda.so", {.kernel_impl = true, .reference = false, .info = cuda, .error = ""});

  EXPECT_EQ(run(), 0) << "SKIPPED is no failure";
  // The device is described by a worker (the fake's: no such device), once, after the sweep is
  // planned; the implementation is told skipped once; its tests are SKIPPED before any test runs.
  std::vector<std::string> want = {"run_started", "op_planned gamma", "sweep_planned 6", "device_described cuda",
                                   "impl_skipped gamma__gamma_cuda cuda"};
  for (const auto& c : kCases) want.push_back("test_finished gamma__gamma_cuda " + c + " SKIPPED");
  for (const auto& e : run_in_order(sweep({"gamma__gamma_good"}))) want.push_back(e);
  want.push_back("run_finished");
  EXPECT_EQ(rec.events, want);
  EXPECT_EQ(rec.skip_reasons, std::vector<std::string>{"no cuda device (fake worker)"});
  const auto asked = fake->requests("devices");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].request.value("kind", ""), "cuda");
  ASSERT_TRUE(rec.summary.has_value());
  ASSERT_EQ(rec.summary->tests.size(), 6u);
  EXPECT_EQ(rec.summary->tests[0].id.impl, "gamma__gamma_cuda") << "sweep order, whenever each result came";
  EXPECT_EQ(rec.summary->tests[0].outcome.verdict, bb::Verdict::skipped);
  EXPECT_EQ(rec.summary->tests[0].outcome.message, "no cuda device (fake worker)");
  EXPECT_EQ(rec.summary->tests[3].id.impl, "gamma__gamma_good");
  EXPECT_TRUE(fake->requests([](const Request& r) { return r.library == "gamma_cuda.so" && r.cmd != "probe"; }).empty())
      << "nothing of a skipped implementation runs";
}
