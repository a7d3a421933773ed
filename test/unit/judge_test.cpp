// The test driver with every role in this process (run_test_in_process), on real fixture
// plugins: every verdict a plugin can earn without taking the process down (crashes and hangs
// are in the end-to-end tests).
#include <gtest/gtest.h>

#include <cmath>

#include "measure/paired.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/judge.hpp"

namespace {

const std::string kHostile = std::string(BB_FIXTURE_ROOTS) + "/hostile/scale/";
const std::string kInplace = std::string(BB_FIXTURE_ROOTS) + "/inplace/addone_/";

// Case `case_index` of the fixture's manifest, as the plan expands it.
bb::TestRequest request(const std::string& dir, const std::string& op, int case_index) {
  auto m = bb::load_manifest(dir + "gen_input.yaml", op);
  if (!m.ok()) {
    ADD_FAILURE() << m.error().message;
    return {};
  }
  auto cases = bb::expand_cases(*m);
  if (!cases.ok() || static_cast<std::size_t>(case_index) >= cases->size()) {
    ADD_FAILURE() << "no case " << case_index << (cases.ok() ? "" : ": " + cases.error().message);
    return {};
  }
  return bb::case_request(op, (*cases)[static_cast<std::size_t>(case_index)], dir);
}

bb::TestResult run(const std::string& dir, const std::string& op, const std::string& impl, const std::string& reference,
                   int case_index = 0, bool determinism = false) {
  bb::TestRequest req = request(dir, op, case_index);
  req.impl = {bb::Target::Kind::kernel_impl, dir + impl};
  req.reference = reference.empty() ? bb::Target{bb::Target::Kind::identity, ""}
                                    : bb::Target{bb::Target::Kind::reference, dir + reference};
  req.check_determinism = determinism;
  return bb::run_test_in_process(req);
}

bb::TestResult scale(const std::string& impl, int case_index = 1, bool determinism = false) {
  return run(kHostile, "scale", impl, "scale_reference.so", case_index, determinism);
}

}  // namespace

TEST(RequestServer, Pass) {
  auto r = scale("scale_good.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  EXPECT_EQ(r.id.case_id, "correctness/small[n=1000]");
}

TEST(RequestServer, FailReportsErrorsCountAndFirstIndex) {
  auto r = scale("scale_wrong.so");
  ASSERT_EQ(r.outcome.verdict, bb::Verdict::fail) << r.outcome.message;
  ASSERT_TRUE(r.outcome.mismatch.has_value());
  EXPECT_EQ(r.outcome.mismatch->count, 100);  // every 10th of 1000
  EXPECT_EQ(r.outcome.mismatch->total, 1000);
  EXPECT_EQ(r.outcome.mismatch->first_index, "[0]");
  EXPECT_GT(r.outcome.mismatch->max_rel_error, 0.009);
  EXPECT_LT(r.outcome.mismatch->max_rel_error, 0.011);
}

TEST(RequestServer, ErrorCarriesThePluginsMessage) {
  auto r = scale("scale_error.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::error);
  EXPECT_NE(r.outcome.message.find("returned 3: this fixture always refuses"), std::string::npos) << r.outcome.message;
}

TEST(RequestServer, Unwritten) {
  auto r = scale("scale_unwritten.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::unwritten) << r.outcome.message;
  EXPECT_EQ(r.outcome.mismatch->unwritten, 500);
  EXPECT_EQ(r.outcome.mismatch->first_index, "[500]");
}

TEST(RequestServer, OutOfBounds) {
  auto r = scale("scale_overflow.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::out_of_bounds) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find("output 'y': wrote up to 16 byte(s) past the end (4000 bytes)"), std::string::npos) << r.outcome.message;
}

TEST(RequestServer, InputMutated) {
  auto r = scale("scale_mutate.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::input_mutated) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find("input 'x': 1 of 1000 elements changed; first at [999]"), std::string::npos) << r.outcome.message;
}

TEST(RequestServer, NondeterministicOnlyWhenAsked) {
  EXPECT_EQ(scale("scale_nondet.so", 1, false).outcome.verdict, bb::Verdict::pass);
  auto r = scale("scale_nondet.so", 1, true);
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::nondeterministic) << r.outcome.message;
  EXPECT_NE(r.outcome.message.find("differ in 1 of 1000"), std::string::npos) << r.outcome.message;
}

TEST(RequestServer, TimesOnlyWhenAskedAndReportsWork) {
  bb::TestRequest req = request(kHostile, "scale", 2);  // performance/big
  req.impl = {bb::Target::Kind::kernel_impl, kHostile + "scale_good.so"};
  req.reference = {bb::Target::Kind::reference, kHostile + "scale_reference.so"};
  req.time = true;
  req.timing.rule.min_samples = 3;
  req.timing.rule.timeout = 0.2;
  auto r = bb::run_test_in_process(req);
  ASSERT_EQ(r.outcome.verdict, bb::Verdict::pass) << r.outcome.message;
  ASSERT_TRUE(r.performance.timing.has_value());
  EXPECT_GE(r.performance.timing->stats.samples, 3u);
  EXPECT_GT(r.performance.timing->stats.median, 0);
  EXPECT_LE(r.performance.timing->stats.min, r.performance.timing->stats.median);
  ASSERT_TRUE(r.performance.gbps.has_value());
  EXPECT_DOUBLE_EQ(*r.id.bytes, 2.0 * 4096 * 4);
  EXPECT_NEAR(*r.performance.gbps, *r.id.bytes / r.performance.timing->stats.median / 1e9, 1e-9 * *r.performance.gbps);

  // Where the test's time went: every worker phase, none negative, together within its duration.
  double phases = 0;
  for (const char* phase : {"setup_s", "inputs_s", "reference_s", "check_s", "timing_s"}) {
    ASSERT_TRUE(r.phases.seconds.count(phase)) << phase;
    EXPECT_GE(r.phases.seconds.at(phase), 0.0) << phase;
    phases += r.phases.seconds.at(phase);
  }
  EXPECT_LE(phases, r.phases.duration + 1e-9);
  EXPECT_GE(r.phases.seconds.at("timing_s"), r.performance.timing->measured_time);  // measuring is inside the timing phase

  // Paired with a baseline (here the implementation itself): both sides' times, the interval.
  req.baseline = bb::Target{bb::Target::Kind::kernel_impl, kHostile + "scale_good.so"};
  auto paired = bb::run_test_in_process(req);
  ASSERT_EQ(paired.outcome.verdict, bb::Verdict::pass) << paired.outcome.message;
  ASSERT_TRUE(paired.performance.timing && paired.performance.speedup && paired.performance.speedup_low && paired.performance.speedup_high && paired.performance.speedup_pairs);
  // Pairing stops on the interval, the budget or the most pairs, never before the fewest pairs.
  EXPECT_TRUE(paired.performance.timing->stop == "converged" || paired.performance.timing->stop == "timeout" || paired.performance.timing->stop == "max_samples")
      << paired.performance.timing->stop;
  EXPECT_GT(paired.performance.timing->baseline_measured_time, 0.0);
  EXPECT_LE(*paired.performance.speedup_low, *paired.performance.speedup);
  EXPECT_LE(*paired.performance.speedup, *paired.performance.speedup_high);
  EXPECT_GE(*paired.performance.speedup_pairs, static_cast<double>(bb::kMinPairs));
  EXPECT_LE(*paired.performance.speedup_pairs, static_cast<double>(bb::kMaxPairs));
  // A baseline that cannot be loaded: the implementation is timed alone, with a note, no speedup.
  req.baseline = bb::Target{bb::Target::Kind::kernel_impl, kHostile + "no_such_baseline.so"};
  auto alone = bb::run_test_in_process(req);
  ASSERT_EQ(alone.outcome.verdict, bb::Verdict::pass) << alone.outcome.message;
  ASSERT_TRUE(alone.performance.timing.has_value());
  EXPECT_FALSE(alone.performance.speedup.has_value());
  EXPECT_FALSE(alone.performance.speedup_pairs.has_value());
  ASSERT_FALSE(alone.performance.timing->notes.empty());
  EXPECT_NE(alone.performance.timing->notes.back().find("baseline: "), std::string::npos) << alone.performance.timing->notes.back();
  req.baseline.reset();

  req.time = false;
  EXPECT_FALSE(bb::run_test_in_process(req).performance.timing.has_value());
}

TEST(RequestServer, IdentityReferenceCopiesTheFirstInput) {
  // y = 2x against identity (y = x) fails, with expected == x.
  auto r = run(kHostile, "scale", "scale_good.so", "", 0);
  ASSERT_EQ(r.outcome.verdict, bb::Verdict::fail) << r.outcome.message;
  EXPECT_DOUBLE_EQ(r.outcome.mismatch->actual, 2 * r.outcome.mismatch->expected);
}

TEST(RequestServer, InPlaceOutputsAliasTheirInputAndNpyInputsLoad) {
  auto good = run(kInplace, "addone_", "addone_good.so", "addone_reference.so", 0);
  EXPECT_EQ(good.outcome.verdict, bb::Verdict::pass) << good.outcome.message;
  auto twice = run(kInplace, "addone_", "addone_twice.so", "addone_reference.so", 0);
  ASSERT_EQ(twice.outcome.verdict, bb::Verdict::fail) << twice.outcome.message;
  // x from data/x.npy is 0..5; the reference adds 1; the wrong impl adds 2.
  EXPECT_EQ(twice.outcome.mismatch->output, "x_out");
  EXPECT_DOUBLE_EQ(twice.outcome.mismatch->expected, 1.0);
  EXPECT_DOUBLE_EQ(twice.outcome.mismatch->actual, 2.0);
  EXPECT_EQ(run(kInplace, "addone_", "addone_untouched.so", "addone_reference.so", 1).outcome.verdict, bb::Verdict::fail);
  EXPECT_EQ(run(kInplace, "addone_", "addone_good.so", "addone_reference.so", 2).outcome.verdict, bb::Verdict::pass);
}

TEST(RequestServer, MissingLibraryIsAnError) {
  auto r = run(kHostile, "scale", "no_such.so", "scale_reference.so");
  EXPECT_EQ(r.outcome.verdict, bb::Verdict::error);
  EXPECT_NE(r.outcome.message.find("no such file"), std::string::npos) << r.outcome.message;
}

TEST(RequestServer, ProtocolRoundTrip) {
  bb::PrepareRequest req;
  req.role = "impl";
  req.op = "op";
  req.test_case.index = 3;
  req.test_case.id = "correctness/small[n=3]";
  req.test_case.seed = 77;
  req.target = {bb::Target::Kind::kernel_impl, "a.so"};
  req.device = "cuda";
  req.device_index = 1;
  const nlohmann::json wire = bb::request_json(req);
  EXPECT_EQ(wire.value("cmd", ""), "prepare");
  auto back = bb::read_request<bb::PrepareRequest>(nlohmann::json::parse(wire.dump()));
  EXPECT_EQ(back.role, "impl");
  EXPECT_EQ(back.test_case.index, 3);
  EXPECT_EQ(back.test_case.id, "correctness/small[n=3]");
  EXPECT_EQ(back.target, req.target);
  EXPECT_EQ(back.test_case.seed, 77u);
  EXPECT_EQ(back.device, "cuda");
  EXPECT_EQ(back.device_index, 1);

  bb::TimingOptions o;
  o.rule.max_noise = 0.005;
  o.mode = bb::TimingMode::hot;
  o.blocking_kernel = false;
  o.throttle_threshold = 0.5;
  o.device_warm = true;
  auto o2 = bb::timing_options_from_json(bb::to_json(o));
  EXPECT_TRUE(o2.device_warm);
  EXPECT_DOUBLE_EQ(o2.rule.max_noise, 0.005);
  EXPECT_EQ(o2.mode, bb::TimingMode::hot);
  EXPECT_FALSE(o2.blocking_kernel);
  EXPECT_DOUBLE_EQ(o2.throttle_threshold, 0.5);

  // A measurement's statistics are recomputed by the receiver from its samples: whatever the
  // sender claims of them is not read.
  bb::Measurement m;
  m.samples = {3e-6, 1e-6, 2e-6};
  m.batch = 2;
  m.warmup_calls = 5;
  m.stats = bb::summarize({1.0});  // a lie
  nlohmann::json jm = bb::to_json(m);
  jm["stats"] = {{"median", 1e-12}};
  auto m2 = bb::measurement_from_json(jm);
  EXPECT_DOUBLE_EQ(m2.stats.median, 2e-6);
  EXPECT_EQ(m2.stats.samples, 3u);
  EXPECT_NEAR(m2.measured_time, 12e-6, 1e-15);
  EXPECT_EQ(m2.warmup_calls, 5u);

  bb::TestResult r;
  r.outcome.verdict = bb::Verdict::out_of_bounds;
  r.performance.speedup = 1.5;
  bb::Timing t;
  t.mode = "hot";
  t.stats = bb::summarize({1, 2, 3});
  t.host = bb::summarize({2, 3, 4});
  t.stop = "converged";
  t.batch = 4;
  t.throttled = 2;
  t.clock_mhz = 1755;
  t.notes = {"2 sample(s) discarded"};
  r.performance.timing = t;
  r.performance.peak_pct = 91.5;
  r.outcome.mismatch = bb::Mismatch{};
  r.outcome.mismatch->actual = std::nan("");  // poison is a NaN; JSON carries it as null
  nlohmann::json j = nlohmann::json::parse(nlohmann::json(r).dump());
  auto r2 = j.get<bb::TestResult>();
  EXPECT_TRUE(std::isnan(r2.outcome.mismatch->actual));
  EXPECT_EQ(r2.outcome.verdict, bb::Verdict::out_of_bounds);
  EXPECT_EQ(*r2.performance.speedup, 1.5);
  EXPECT_EQ(r2.performance.timing->stats.median, 2);
  EXPECT_EQ(r2.performance.timing->batch, 4u);
  EXPECT_EQ(r2.performance.timing->mode, "hot");
  EXPECT_EQ(r2.performance.timing->host.median, 3);
  EXPECT_EQ(r2.performance.timing->throttled, 2u);
  EXPECT_EQ(r2.performance.timing->clock_mhz, 1755);
  EXPECT_EQ(r2.performance.timing->notes, std::vector<std::string>{"2 sample(s) discarded"});
  EXPECT_EQ(*r2.performance.peak_pct, 91.5);
}

// A call's reply on the wire: each member under its own name. Read back, a missing key keeps its
// default, and a reply that is not an object is an error, never a crash.
TEST(RequestServer, CallReplyWireFormat) {
  EXPECT_EQ(bb::CallReply{}.to_json().dump(),
            R"({"changed_after_return":"","error":"","left_behind":"","outside":false,"skipped":false,"sticky":false,"unsupported":false})");
  bb::CallReply c;
  c.error = "device error";
  c.sticky = true;
  c.outside = true;
  c.left_behind = "a thread";
  c.changed_after_return = "y";
  c.skipped = true;
  c.unsupported = true;
  const auto back = bb::CallReply::from_json(nlohmann::json::parse(c.to_json().dump()));
  EXPECT_EQ(back.error, "device error");
  EXPECT_TRUE(back.sticky);
  EXPECT_TRUE(back.outside);
  EXPECT_EQ(back.left_behind, "a thread");
  EXPECT_EQ(back.changed_after_return, "y");
  EXPECT_TRUE(back.skipped);
  EXPECT_TRUE(back.unsupported);

  const auto partial = bb::CallReply::from_json({{"error", "x"}, {"measurement", {{"samples", {1.0}}}}});
  EXPECT_EQ(partial.error, "x");
  EXPECT_FALSE(partial.sticky);
  EXPECT_FALSE(partial.outside);
  EXPECT_EQ(partial.left_behind, "");
  EXPECT_FALSE(partial.unsupported);
  EXPECT_EQ(bb::CallReply::from_json(nlohmann::json::object()).error, "");
  for (const auto& not_object : {nlohmann::json(), nlohmann::json::array({1}), nlohmann::json("error"), nlohmann::json(3)})
    EXPECT_EQ(bb::CallReply::from_json(not_object).error, "the worker's reply is not an object") << not_object.dump();
}
