// run_job, and the test driver under it, with fake workers (fake_executor.hpp): verdicts from
// the buffers the fake sends back, crashes and timeouts from its outcomes, which worker gets which
// request. The plan comes from plan_op, whose probes the fake answers too. No process is started.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "fake_executor.hpp"
#include "plan/discovery.hpp"
#include "plan/jobs.hpp"
#include "plan/plan.hpp"
#include "run/job_runner.hpp"
#include "run/workers/worker_walls.hpp"
#include "sweep_options.hpp"
#include "temp_ops_root.hpp"

namespace {

using bb_fake::Answer;
using bb_fake::FakeExecutor;
using bb_fake::FakeWorkers;
using bb_fake::Kernel;
using bb_fake::Match;
using bb_fake::Request;

const std::string kSmall16 = "correctness/small[n=16]";
const std::string kSmall100 = "correctness/small[n=100]";
const std::string kBig = "performance/big";

class JobRunner : public ::testing::Test {
 protected:
  JobRunner() {
    options.isolate = false;
    options.performance = false;
    options.test_timeout = 10;
    options.timing.rule.min_samples = 3;
    options.timing.rule.min_time = 0;
    options.timing.rule.timeout = 0.5;
    options.timing.warmup_time = 0;
  }

  // Plans every op of the root, its libraries probed by a fake worker.
  void plan() {
    auto folders = bb::discover_ops(root.dir);
    ASSERT_TRUE(folders) << folders.error().message;
    auto probe = fake->make();
    for (const auto& f : *folders) {
      auto p = bb::plan_op(f, *probe, no_variant_plan());
      ASSERT_TRUE(p) << p.error().message;
      ASSERT_TRUE(p->failures.empty()) << p->failures.front().error;
      plans.push_back(std::move(*p));
    }
    probe_worker = probe->id();
    ctx = std::make_unique<bb::SweepContext>(bb::SweepContext{plans, options, kinds, {}, {}, nullptr});
    for (const auto& p : plans)
      for (const auto& lib : p.folder.libraries) ctx->libraries.push_back(lib.string());
    workers = std::make_unique<bb::SlotWorkers>(*ctx);
    workers->impl = fake->make();
    workers->reference = fake->make();
    workers->baseline = fake->make();
  }

  std::vector<bb::Job> jobs() {
    const auto tests = bb::enumerate_tests(plans, 1, options.performance, options.timing);
    return bb::make_jobs(tests, plans, bb::JobOptions{options.performance, {}});
  }

  // Every job, one worker slot, as the pool runs them: a fresh implementation's worker for each
  // implementation, the reference's and the baseline's kept (run_job recycles them when what they
  // serve changes).
  void run_all() {
    ASSERT_TRUE(ctx) << "plan() failed";
    std::pair<int, int> last{-1, -1};
    for (const auto& job : jobs()) {
      if (std::pair{job.op, job.impl} != last) {
        workers->impl = fake->make();
        workers->impl->set_walls(bb::walls_for(*ctx, plans[job.op].impls[job.impl].library.string()));
        impl_workers.push_back(id(workers->impl));
      }
      last = {job.op, job.impl};
      bb::run_job(job, 0, *workers, *ctx, events());
    }
  }

  // The twice op with twice_good and its reference, twice_good's call on `case_id` answered by
  // `answer`, every job run: twice_good's result for that case.
  const bb::TestResult& run_twice_good(const std::string& case_id, Answer answer) {
    root.add_op("twice", {"twice_good.so", "twice_reference.so"});
    fake->on({.cmd = "call", .library = "twice_good.so", .case_id = case_id}, std::move(answer));
    plan();
    run_all();
    return result("twice__twice_good", case_id);
  }

  bb::JobEvents events() {
    bb::JobEvents e;
    e.started = [this](const bb::TestResult& r) {
      ASSERT_EQ(started.size(), finished.size()) << "a test started before the one before it finished";
      started.push_back(r);
    };
    e.finished = [this](bb::TestResult r, std::size_t order) {
      finished.push_back(std::move(r));
      orders.push_back(order);
    };
    e.warning = [this](const std::string& w) { warnings.push_back(w); };
    e.measured = [this](double s) { measured += s; };
    return e;
  }

  static int id(const std::unique_ptr<bb::Executor>& e) { return static_cast<FakeExecutor&>(*e).id(); }

  const bb::TestResult& result(const std::string& impl, const std::string& case_id) {
    for (const auto& r : finished)
      if (r.id.impl == impl && r.id.case_id == case_id) return r;
    ADD_FAILURE() << "no result for " << impl << " " << case_id;
    static bb::TestResult none;
    return none;
  }

  TempOpsRoot root;
  std::shared_ptr<FakeWorkers> fake = FakeWorkers::create();
  bb::SessionOptions options = no_variants();  // sweep_options.hpp
  std::map<std::string, bb::DeviceKind> kinds{{"cpu", bb::cpu_device_kind()}};
  std::vector<bb::OpPlan> plans;
  std::unique_ptr<bb::SweepContext> ctx;
  std::unique_ptr<bb::SlotWorkers> workers;
  int probe_worker = -1;
  std::vector<int> impl_workers;
  std::vector<bb::TestResult> started, finished;
  std::vector<std::size_t> orders;
  std::vector<std::string> warnings;
  double measured = 0;
};

}  // namespace

TEST_F(JobRunner, APassingTestGetsItsIdentityAndPass) {
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  plan();
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].impls.size(), 1u);
  EXPECT_EQ(plans[0].reference.name, "twice_reference");
  EXPECT_EQ(fake->commands(probe_worker), "recycle probe recycle recycle probe recycle recycle") << "one fresh worker per probe";
  run_all();

  ASSERT_EQ(finished.size(), 3u);
  const std::vector<std::string> cases = {kSmall16, kSmall100, kBig};
  for (std::size_t k = 0; k < finished.size(); ++k) {
    const auto& r = finished[k];
    EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.id.case_id << ": " << r.outcome.message;
    EXPECT_EQ(r.id.op, "twice");
    EXPECT_EQ(r.id.impl, "twice__twice_good");
    EXPECT_EQ(r.id.case_id, cases[k]);
    EXPECT_EQ(r.id.kind, k < 2 ? "correctness" : "performance");
    EXPECT_EQ(r.id.device, "cpu");
    EXPECT_EQ(r.id.device_index, 0);
    EXPECT_EQ(orders[k], k) << "sweep order";
    EXPECT_FALSE(r.performance.timing.has_value()) << "nothing is timed without --performance";
    // What test_started said is what test_finished says.
    EXPECT_EQ(started[k].id.impl, r.id.impl);
    EXPECT_EQ(started[k].id.case_id, r.id.case_id);
  }
  // The implementation's worker prepared each case with its own library and the host's inputs,
  // called it once and ended it; the reference's did the same with the reference.
  const int impl = impl_workers.at(0), ref = id(workers->reference);
  EXPECT_EQ(fake->commands(impl), "prepare call end prepare call end prepare call end");
  EXPECT_EQ(fake->commands(ref), "recycle prepare call end prepare call end prepare call end");
  for (const auto& r : fake->requests("prepare")) {
    EXPECT_TRUE(r.with_fd) << "the case's inputs travel in a memfd";
    const auto target = bb::target_from_json(r.request["target"]);
    if (r.worker == impl) {
      EXPECT_EQ(target.kind, bb::Target::Kind::kernel_impl);
      EXPECT_EQ(r.library, "twice_good.so");
      EXPECT_EQ(r.role, "impl");
    } else {
      EXPECT_EQ(r.worker, ref);
      EXPECT_EQ(target.kind, bb::Target::Kind::reference);
      EXPECT_EQ(r.library, "twice_reference.so");
    }
  }
  EXPECT_TRUE(fake->requests([&](const Request& r) { return r.worker == id(workers->baseline); }).empty())
      << "no baseline without timing";
}

TEST_F(JobRunner, WrongOutputsFailAndUnwrittenOnesAreUnwritten) {
  root.add_op("twice", {"twice_bad.so", "twice_lazy.so", "twice_reference.so"});
  fake->on({.cmd = "call", .library = "twice_bad.so"}, Answer::computing(Kernel::wrong));
  fake->on({.cmd = "call", .library = "twice_lazy.so", .case_id = kSmall100}, Answer::computing(Kernel::unwritten));
  plan();
  run_all();
  ASSERT_EQ(finished.size(), 6u);
  const auto& bad = result("twice__twice_bad", kSmall100);
  EXPECT_EQ(bad.outcome.verdict, bb::Verdict::fail) << bad.outcome.message;
  ASSERT_TRUE(bad.outcome.mismatch.has_value());
  EXPECT_EQ(bad.outcome.mismatch->output, "y");
  EXPECT_EQ(bad.outcome.mismatch->count, 100);
  EXPECT_EQ(bad.outcome.mismatch->total, 100);
  EXPECT_DOUBLE_EQ(bad.outcome.mismatch->actual, bad.outcome.mismatch->expected + 1);
  EXPECT_EQ(result("twice__twice_lazy", kSmall100).outcome.verdict, bb::Verdict::unwritten);
  EXPECT_EQ(result("twice__twice_lazy", kSmall16).outcome.verdict, bb::Verdict::pass);
}

TEST_F(JobRunner, ACrashIsCrashWithItsDetailAndTheNextTestGetsAFreshProcess) {
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  fake->on({.cmd = "call", .library = "twice_good.so", .case_id = kSmall16},
           Answer::crash("killed by signal SIGSEGV (Segmentation fault)").printing("about to fault\n"));
  plan();
  run_all();
  ASSERT_EQ(finished.size(), 3u);
  EXPECT_EQ(finished[0].outcome.verdict, bb::Verdict::crash);
  EXPECT_EQ(finished[0].outcome.message, "killed by signal SIGSEGV (Segmentation fault)");
  EXPECT_EQ(finished[0].output.text, "about to fault\n") << "its last words are kept";
  EXPECT_EQ(finished[1].outcome.verdict, bb::Verdict::pass) << finished[1].outcome.message;
  EXPECT_EQ(finished[2].outcome.verdict, bb::Verdict::pass) << finished[2].outcome.message;
  // No "end" goes to a worker that died: the next request is the next test's prepare, in a new process.
  const auto impl = fake->requests([&](const Request& r) { return r.worker == impl_workers.at(0); });
  ASSERT_GE(impl.size(), 3u);
  EXPECT_EQ(impl[0].cmd, "prepare");
  EXPECT_EQ(impl[1].cmd, "call");
  EXPECT_EQ(impl[2].cmd, "prepare");
  EXPECT_EQ(impl[2].case_id, kSmall100);
  EXPECT_EQ(impl[2].process, impl[1].process + 1);
}

TEST_F(JobRunner, ATimeoutIsTimeoutAfterTheTestTimeout) {
  options.test_timeout = 7;
  const auto& r = run_twice_good(kSmall100, Answer::timeout());
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::timeout);
  EXPECT_EQ(r.outcome.message, "no result after 7.0 s; the worker was killed");
  const auto calls = fake->requests([](const Request& q) { return q.cmd == "call" && q.role == "impl"; });
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& c : calls) EXPECT_DOUBLE_EQ(c.timeout, 7.0) << "a call may take --test-timeout";
  EXPECT_EQ(result("twice__twice_good", kSmall16).outcome.verdict, bb::Verdict::pass);
  EXPECT_EQ(result("twice__twice_good", kBig).outcome.verdict, bb::Verdict::pass);
}

// The implementation's worker is the plugin's process: its reply can be anything. A key of
// another type than the protocol's is an ERROR of that test (and a fresh worker for the next),
// never an exception that ends the host and the run's results with it.
TEST_F(JobRunner, AReplyOfAnotherShapeIsAnErrorAndTheHostGoesOn) {
  const auto& r = run_twice_good(kSmall100, Answer::replying({{"error", ""}, {"sticky", "yes"}, {"outside", 7}}));
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::error);
  EXPECT_NE(r.outcome.message.find("the worker's reply could not be read"), std::string::npos) << r.outcome.message;
  EXPECT_EQ(result("twice__twice_good", kSmall16).outcome.verdict, bb::Verdict::pass);
  EXPECT_EQ(result("twice__twice_good", kBig).outcome.verdict, bb::Verdict::pass);
  // Its worker is not asked again ("end" included): it is recycled, and the next test's prepare
  // goes to a new process.
  const auto impl = fake->requests([&](const Request& q) { return q.worker == impl_workers.at(0); });
  const auto bad = std::find_if(impl.begin(), impl.end(), [](const Request& q) { return q.cmd == "call" && q.case_id == kSmall100; });
  ASSERT_NE(bad, impl.end());
  ASSERT_GE(impl.end() - bad, 3);
  EXPECT_EQ((bad + 1)->cmd, "recycle");
  EXPECT_EQ((bad + 2)->cmd, "prepare");
  EXPECT_EQ((bad + 2)->process, bad->process + 1);
}

TEST_F(JobRunner, UnsupportedOnTheFirstCallIsSkippedWithItsMessage) {
  const auto& r = run_twice_good(kSmall100, Answer::unsupported_case("n must be a multiple of 32"));
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::skipped);
  EXPECT_EQ(r.outcome.message, "unsupported by the implementation: n must be a multiple of 32");
  EXPECT_EQ(result("twice__twice_good", kSmall16).outcome.verdict, bb::Verdict::pass);
}

TEST_F(JobRunner, UnsupportedIsAnErrorWhereTheDeclaredPreconditionsAdmitTheCase) {
  bb::PluginInfo info;
  info.present = true;
  info.preconditions = {"numel(x) > 0"};  // every case meets it
  fake->library("twice_good.so", {.kernel_impl = true, .reference = false, .info = info, .error = ""});
  const auto& r = run_twice_good(kSmall100, Answer::unsupported_case("n must be a multiple of 32"));
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::error);
  EXPECT_EQ(r.outcome.message, "BB_ERR_UNSUPPORTED: n must be a multiple of 32: its declared preconditions admit this case");
}

TEST_F(JobRunner, UnsupportedAfterACallReturnedIsAnError) {
  options.check_determinism = true;  // a second call on the same case
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  fake->on({.cmd = "call", .library = "twice_good.so", .case_id = kSmall16, .times = 1}, Answer{});
  fake->on({.cmd = "call", .library = "twice_good.so", .case_id = kSmall16}, Answer::unsupported_case("changed its mind"));
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kSmall16);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::error);
  EXPECT_EQ(r.outcome.message, "second call: BB_ERR_UNSUPPORTED: changed its mind");
  EXPECT_EQ(result("twice__twice_good", kSmall100).outcome.verdict, bb::Verdict::pass) << "two calls, the same bytes";
}

TEST_F(JobRunner, TheReferenceWorkerServesEveryTestOfItsOp) {
  root.add_op("twice", {"twice_fast.so", "twice_good.so", "twice_reference.so"});
  plan();
  run_all();
  ASSERT_EQ(finished.size(), 6u);
  for (const auto& r : finished) EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.id.impl << " " << r.id.case_id << ": " << r.outcome.message;
  ASSERT_EQ(impl_workers.size(), 2u);
  EXPECT_NE(impl_workers[0], impl_workers[1]) << "each implementation in a worker of its own";
  const auto reference = fake->requests([](const Request& r) { return r.role == "reference"; });
  ASSERT_FALSE(reference.empty());
  std::set<std::pair<int, int>> where;
  for (const auto& r : reference) where.insert({r.worker, r.process});
  EXPECT_EQ(where.size(), 1u) << "every reference request in one worker process";
  EXPECT_EQ(reference.front().worker, id(workers->reference));
  // Started once (its first serve), never again for the second implementation.
  const auto recycles = fake->requests([&](const Request& r) { return r.worker == id(workers->reference) && r.cmd == "recycle"; });
  EXPECT_EQ(recycles.size(), 1u);
  // The reference's buffers of a case are made once: the second implementation's tests use them.
  const auto calls = std::count_if(reference.begin(), reference.end(), [](const Request& r) { return r.cmd == "call"; });
  EXPECT_EQ(calls, 3);
}

TEST_F(JobRunner, EveryOpsReferenceLibraryIsServedByTheSlotsOneReferenceWorker) {
  root.add_op("alpha", {"alpha_good.so", "alpha_reference.so"});
  root.add_op("beta", {"beta_good.so", "beta_reference.so"});
  plan();
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(bb::reference_worker_key(plans[0], "cuda"), bb::reference_worker_key(plans[1], "cuda"));
  EXPECT_TRUE(bb::shares_references(bb::reference_worker_key(plans[0], "cpu")));
  // An implementation (as baseline, or chosen as reference) and a .py reference keep one of their own.
  EXPECT_FALSE(bb::shares_references(bb::side_worker_key(bb::Target{bb::Target::Kind::kernel_impl, "alpha_good.so"}, "cuda")));
  EXPECT_FALSE(bb::shares_references(bb::side_worker_key(bb::Target{bb::Target::Kind::reference, "alpha_reference.py"}, "cuda")));
  run_all();
  ASSERT_EQ(finished.size(), 6u);
  for (const auto& r : finished) EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  const int ref = id(workers->reference);
  const auto log = fake->requests([&](const Request& r) { return r.worker == ref; });
  // recycle, alpha's reference..., beta's reference...: one process serves both ops' references
  // (a new op costs the slot no process and no device context).
  std::vector<std::string> seen;
  for (const auto& r : log)
    if (r.cmd == "recycle" || r.cmd == "prepare") seen.push_back(r.cmd == "recycle" ? "recycle" : r.library);
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"recycle", "alpha_reference.so", "beta_reference.so"}));
  for (const auto& r : log)
    if (r.cmd == "prepare") EXPECT_EQ(r.process, 1);
}

TEST_F(JobRunner, WhatTheImplementationPrintedLandsInItsResult) {
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  fake->on({.cmd = "prepare", .library = "twice_good.so", .case_id = kSmall16}, Answer{}.printing("loading twice_good\n"));
  fake->on({.cmd = "call", .library = "twice_good.so", .case_id = kSmall16}, Answer{}.printing("computing 16\n"));
  fake->on({.cmd = "call", .library = "twice_reference.so"}, Answer{}.printing("the reference speaks\n"));
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kSmall16);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  EXPECT_EQ(r.output.text, "loading twice_good\ncomputing 16\n") << "the implementation's words, in order; never the reference's";
  EXPECT_EQ(r.output.bytes, r.output.text.size());
  EXPECT_EQ(result("twice__twice_good", kSmall100).output.text, "");
}

TEST_F(JobRunner, ATimedTestCarriesItsTimeAndItsSpeedupAgainstTheBaseline) {
  options.performance = true;
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  // The implementation's blocks report 100 us a call, the baseline's (the reference, timed in its
  // worker) 200 us.
  fake->on({.cmd = "block", .role = "impl"}, Answer::timed(100e-6));
  fake->on({.cmd = "block", .role = "baseline"}, Answer::timed(200e-6));
  plan();
  ASSERT_EQ(plans[0].baselines.size(), 1u);
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  ASSERT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  ASSERT_TRUE(r.performance.timing.has_value());
  EXPECT_DOUBLE_EQ(r.performance.timing->stats.median, 100e-6);
  ASSERT_TRUE(r.performance.speedup.has_value());
  EXPECT_NEAR(*r.performance.speedup, 2.0, 0.05);
  EXPECT_LE(*r.performance.speedup_low, *r.performance.speedup);
  EXPECT_GE(*r.performance.speedup_high, *r.performance.speedup);
  ASSERT_TRUE(r.performance.gbps.has_value());
  EXPECT_NEAR(*r.performance.gbps, 2 * 256 * 4 / 100e-6 / 1e9, 1e-9);
  EXPECT_GT(measured, 0.0);
  EXPECT_FALSE(result("twice__twice_good", kSmall16).performance.timing.has_value()) << "correctness cases are not timed";
  // The baseline was timed in the reference's worker (the same function on the same device), and
  // after the blocks the implementation's worker audited its own code.
  const auto blocks = fake->requests([](const Request& q) { return q.cmd == "block" && q.role == "baseline"; });
  ASSERT_FALSE(blocks.empty());
  for (const auto& b : blocks) EXPECT_EQ(b.worker, id(workers->reference));
  EXPECT_EQ(fake->requests("audit").size(), 1u);
}

TEST_F(JobRunner, AnImplementationWrongWhileTimedGetsNoTime) {
  options.performance = true;
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  fake->on({.cmd = "block", .role = "impl"}, Answer::computing(Kernel::wrong));
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::fail);
  EXPECT_NE(r.outcome.message.find("wrong while timed: sample "), std::string::npos) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find(" of block 1, on fresh inputs: output 'y'"), std::string::npos) << r.outcome.message;
  EXPECT_FALSE(r.performance.timing.has_value());
  EXPECT_FALSE(r.performance.speedup.has_value());
  EXPECT_FALSE(r.performance.gbps.has_value());
}

// Every timed sample of a CPU case runs on inputs the host made for it alone, just before it
// (fresh_inputs.hpp): a cache that answers each sample from the case's inputs (right for them,
// and for every call of a block that repeats them) is judged on one sample, picked in secret,
// against the reference for that sample's inputs. Attack first: without fresh inputs it passes.
TEST_F(JobRunner, ACacheAnsweringEveryTimedSampleFromTheCasesInputsFailsOnFreshInputs) {
  options.performance = true;
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  Answer replay;
  replay.replays = true;
  fake->on({.cmd = "block", .role = "impl"}, replay);
  setenv("BACKENDBENCH_SANDBOX_OFF", "fresh", 1);
  plan();
  run_all();
  unsetenv("BACKENDBENCH_SANDBOX_OFF");
  EXPECT_EQ(result("twice__twice_good", kBig).outcome.verdict, bb::Verdict::pass)
      << "the attack, where every sample repeats the case's inputs: " << result("twice__twice_good", kBig).outcome.message;
  EXPECT_TRUE(fake->requests("pace").empty());
  finished.clear();
  started.clear();
  plans.clear();
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::fail) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find(", on fresh inputs: output 'y'"), std::string::npos) << r.outcome.message;
  // Both sides were paced, each once: the baseline is timed on fresh inputs too.
  const auto paced = fake->requests("pace");
  ASSERT_EQ(paced.size(), 2u);
  EXPECT_TRUE(std::any_of(paced.begin(), paced.end(), [](const Request& q) { return q.role == "baseline"; }));
  EXPECT_GT(result("twice__twice_good", kBig).phases.seconds.count("fresh_inputs_s"), 0u);
}

// The sample judged is any of a block's, each as likely (reservoir sampling): a worker runs as
// many samples as it likes, and one that computes its block's first sample and answers the rest
// from the case's inputs is judged on one of the rest two times in three, block after block.
TEST_F(JobRunner, TheSampleJudgedIsAnyOfTheBlocksSamplesHoweverManyTheWorkerRuns) {
  options.performance = true;
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  Answer first_only;
  first_only.replays = true;
  first_only.honest_samples = 1;
  fake->on({.cmd = "block", .role = "impl"}, first_only);
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::fail) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find(", on fresh inputs: output 'y'"), std::string::npos) << r.outcome.message;
  EXPECT_EQ(r.outcome.message.find("sample 1 of"), std::string::npos) << "its first sample computed: " << r.outcome.message;
}

// Every sample a worker reports must be one the host paced: a worker that paces one sample and
// reports others besides (run between, on inputs of its own: a cache's hits) is IMPLAUSIBLE.
TEST_F(JobRunner, SamplesTheHostDidNotPaceAreImplausible) {
  options.performance = true;
  root.add_op("twice", {"twice_good.so", "twice_reference.so"});
  Answer extra;
  extra.unpaced_samples = 2;
  fake->on({.cmd = "block", .role = "impl"}, extra);
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::implausible) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find("the host made inputs for 1"), std::string::npos) << r.outcome.message;
}

// An input whose initialiser cannot vary (ones, full, arange, a file) keeps its values in every
// timed sample; the others are fresh, and the result says which inputs repeat.
TEST_F(JobRunner, InputsThatCannotVaryRepeatAndTheResultSaysSo) {
  options.performance = true;
  std::string yaml = kTwiceManifest;
  yaml.replace(yaml.find("inputs:\n  - {name: x, dtype: float32, init: randn}"), std::string("inputs:\n  - {name: x, dtype: float32, init: randn}").size(),
               "inputs:\n  - {name: x, dtype: float32, init: randn}\n  - {name: w, dtype: float32, shape: [4], init: ones}");
  root.add_op("twice", {"twice_good.so", "twice_reference.so"}, yaml);
  plan();
  run_all();
  const auto& r = result("twice__twice_good", kBig);
  ASSERT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  ASSERT_TRUE(r.performance.timing.has_value());
  const auto& notes = r.performance.timing->notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("inputs repeat: w keeps its values") != std::string::npos; }))
      << ::testing::PrintToString(notes);
  EXPECT_EQ(fake->requests("pace").size(), 2u) << "x varies: both sides are paced";
}

TEST_F(JobRunner, TheBaselinesWorkerIsNotFrozenBeforeTheTestIsTimed) {
  // A baseline of its own worker may still be starting while the job's correctness tests run (its
  // warm-up is settled before the first timed block): frozen then, it never answers its warm-up,
  // and the timed test waits for it until its timeout (a sweep on two GPUs took 60 s longer).
  // The fake's frozen worker answers nothing, as a real one.
  options.performance = true;
  std::string yaml = kTwiceManifest;
  yaml.insert(yaml.find("inputs:"), "baseline: twice_base\n");
  root.add_op("twice", {"twice_good.so", "twice_base.so", "twice_reference.so"}, yaml);
  plan();
  run_all();
  EXPECT_EQ(result("twice__twice_good", kSmall16).outcome.verdict, bb::Verdict::pass);
  const auto& timed = result("twice__twice_good", kBig);
  ASSERT_EQ(timed.outcome.verdict, bb::Verdict::pass) << timed.outcome.message;
  ASSERT_TRUE(timed.performance.speedup.has_value()) << "timed against twice_base";
  const int baseline = id(workers->baseline);
  bool prepared = false, frozen_before = false;
  for (const auto& r : fake->log()) {
    if (r.worker != baseline) continue;
    if (r.cmd == "prepare") prepared = true;
    if (r.cmd == "freeze" && !prepared) frozen_before = true;
  }
  EXPECT_TRUE(prepared) << fake->commands(baseline);
  EXPECT_FALSE(frozen_before) << "frozen before its first timed block: " << fake->commands(baseline);
  EXPECT_NE(fake->commands(baseline).find("freeze"), std::string::npos) << "frozen while the implementation's blocks ran";
}

// A worker of a CUDA slot sees its GPU alone (four GPUs each make their own contexts at once):
// its walls name the device's UUID (CUDA_VISIBLE_DEVICES) and the host's ordinal for it, which
// the worker maps to its device 0. Not for a worker of no CUDA slot, a device the run does not
// know, a MIG instance (named otherwise there), nor workers kept in the host.
TEST(WorkerWalls, AWorkerOfAGpuSlotSeesItsDeviceAlone) {
  std::vector<bb::OpPlan> plans;
  bb::SessionOptions o = no_variants();
  o.isolate = true;
  bb::DeviceKind cuda;
  cuda.name = "cuda";
  cuda.available = true;
  for (int k = 0; k < 2; ++k) {
    bb::DeviceFacts d;
    d.ordinal = k;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = k == 0 ? "GPU-0a0a0a0a-0000-0000-0000-000000000000" : "GPU-1b1b1b1b-0000-0000-0000-000000000000";
    cuda.devices.push_back(d);
  }
  std::map<std::string, bb::DeviceKind> kinds{{"cpu", bb::DeviceKind{}}, {"cuda", cuda}};
  bb::SweepContext ctx{plans, o, kinds, {}, {}, nullptr};
  const auto gpu = [](int ordinal) { return bb::slot_device({"cpu", "cuda"}, ordinal); };
  const auto w = bb::walls_for(ctx, "", gpu(1));
  EXPECT_EQ(w.device_uuid, "GPU-1b1b1b1b-0000-0000-0000-000000000000");
  EXPECT_EQ(w.device_ordinal, 1);
  EXPECT_EQ(w.device_runtime, "cuda");
  EXPECT_EQ(bb::walls_for(ctx, "", gpu(0)).device_uuid, "GPU-0a0a0a0a-0000-0000-0000-000000000000");
  EXPECT_TRUE(bb::walls_for(ctx, "").device_uuid.empty()) << "a worker of no CUDA slot";
  EXPECT_FALSE(bb::slot_device({"cpu"}, 0)) << "a CPU slot has no device to narrow to";
  EXPECT_FALSE(bb::slot_device({"hip"}, 0)) << "HIP's workers are not narrowed (its row says so)";
  EXPECT_TRUE(bb::walls_for(ctx, "", gpu(2)).device_uuid.empty()) << "no such device";
  kinds["cuda"].devices[1].name = "NVIDIA A100-SXM4-40GB MIG 1g.5gb";
  EXPECT_TRUE(bb::walls_for(ctx, "", gpu(1)).device_uuid.empty()) << "a MIG instance";
  o.isolate = false;
  EXPECT_TRUE(bb::walls_for(ctx, "", gpu(0)).device_uuid.empty()) << "workers in the host";
}

// The slot's one reference worker sees every op's reference library and none of the
// implementations; an implementation's worker sees its own library alone.
TEST(WorkerWalls, TheSharedReferenceWorkerSeesEveryReferenceLibraryAndNoImplementation) {
  const auto dir = std::filesystem::temp_directory_path() / "bb_walls_libraries";
  std::filesystem::create_directories(dir);
  std::vector<std::string> libraries;
  for (const char* name : {"alpha_good.so", "alpha_reference.so", "beta_good.so", "beta_reference.so"}) {
    std::ofstream((dir / name).string()) << "x";
    libraries.push_back((dir / name).string());
  }
  bb::SessionOptions o = no_variants();
  o.isolate = true;
  auto hidden = [&](const std::vector<std::string>& own) {
    auto files = bb::walls_for(o, {}, libraries, own).spec.hidden_files;
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(std::filesystem::path(f).filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(hidden({libraries[1], libraries[3]}), (std::vector<std::string>{"alpha_good.so", "beta_good.so"}));
  EXPECT_EQ(hidden({libraries[0]}), (std::vector<std::string>{"alpha_reference.so", "beta_good.so", "beta_reference.so"}));
  std::filesystem::remove_all(dir);
}

// How many GPUs a host shows before any is asked (a run on every GPU of a host of several
// starts no stock of workers on device 0): CUDA_VISIBLE_DEVICES where it is set, else the
// /dev/nvidia<N> nodes; HIP cannot tell.
TEST(WorkerStock, TheGpuCountHintReadsCudaVisibleDevicesFirst) {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before ? before : "";
  setenv("CUDA_VISIBLE_DEVICES", "0,1,3", 1);
  EXPECT_EQ(bb::gpu_count_hint("cuda"), 3);
  setenv("CUDA_VISIBLE_DEVICES", "GPU-0a0a0a0a-0000-0000-0000-000000000000", 1);
  EXPECT_EQ(bb::gpu_count_hint("cuda"), 1);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(bb::gpu_count_hint("cuda"), 0);
  unsetenv("CUDA_VISIBLE_DEVICES");
  int nodes = 0;
  for (int k = 0; k < 64; ++k) nodes += access(("/dev/nvidia" + std::to_string(k)).c_str(), F_OK) == 0 ? 1 : 0;
  EXPECT_EQ(bb::gpu_count_hint("cuda"), nodes);
  EXPECT_EQ(bb::gpu_count_hint("hip"), -1);
  if (before) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
}
