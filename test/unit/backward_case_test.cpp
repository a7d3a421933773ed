// The manifest's `backward:` (manifest.hpp) and the backward call derived from each forward case
// (backward_case.hpp): what a backward kernel reads and writes, and the errors a wrong
// declaration gets, each naming its line.
#include <gtest/gtest.h>

#include <string>

#include "plan/backward_case.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/judge.hpp"

namespace {

std::string manifest(const std::string& backward, const std::string& x_dtype = "dtype") {
  return R"(op: norm
inputs:
  - name: x
  - name: weight
  - name: rows_seen
attributes:
  - {name: eps, type: float, default: 1.0e-6}
outputs:
  - {name: y, shape: x, dtype: x}
  - {name: rstd, shape: [x.0], dtype: float32}
tolerances:
  float16: {atol: 1.0e-3, rtol: 1.0e-3}
)" + backward + R"(
tests:
  correctness:
    - name: small
      params: {dtype: [float32, float16]}
      inputs:
        x: {shape: [4, 8], dtype: )" + x_dtype + R"(}
        weight: {shape: [8], dtype: dtype}
        rows_seen: {shape: [4], dtype: int64, init: zeros}
)";
}

bb::Expected<bb::Manifest> parse(const std::string& text) { return bb::parse_manifest(text, "/ops/norm/gen_input.yaml", "norm"); }

std::string error_of(const std::string& backward) {
  auto m = parse(manifest(backward));
  return m.ok() ? "" : m.error().message;
}

}  // namespace

TEST(Backward, TheManifestDeclaresItsDifferentiableInputsInTheirOrder) {
  auto m = parse(manifest("backward:\n  differentiable: [weight, x]\n  tolerances: {float32: {atol: 1.0e-4, rtol: 1.0e-4}}"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->backward);
  EXPECT_EQ(m->backward->differentiable, (std::vector<std::string>{"x", "weight"})) << "the inputs' order, not the list's";
  EXPECT_DOUBLE_EQ(m->backward->tolerances.at(bb::DType::float32).atol, 1e-4);
  EXPECT_EQ(m->backward->line, 14);  // its mapping's first line
  EXPECT_EQ(m->backward->modes, (std::vector<bb::Mode>{bb::Mode::fwd, bb::Mode::bwd})) << "both passes, unless it says";
  auto only = parse(manifest("backward:\n  differentiable: [x]\n  modes: [bwd]"));
  ASSERT_TRUE(only.ok()) << only.error().message;
  EXPECT_EQ(only->backward->modes, std::vector<bb::Mode>{bb::Mode::bwd});
  auto none = parse(manifest(""));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->backward) << "no backward: a forward op, as before";
}

TEST(Backward, AWrongDeclarationIsAnErrorNamingItsLine) {
  EXPECT_NE(error_of("backward:\n  differentiable: [z]").find("gen_input.yaml:14: backward: differentiable: 'z' is not an input"), std::string::npos)
      << error_of("backward:\n  differentiable: [z]");
  EXPECT_NE(error_of("backward:\n  differentiable: [x, x]").find("'x' is listed twice"), std::string::npos);
  EXPECT_NE(error_of("backward:\n  differentiable: []").find("expected 'differentiable:' with a list of at least one input"), std::string::npos);
  EXPECT_NE(error_of("backward: {}").find("expected 'differentiable:'"), std::string::npos);
  EXPECT_NE(error_of("backward:\n  differentiable: [x]\n  saves: [rstd]").find("unknown key 'saves' in backward"), std::string::npos);
  EXPECT_NE(error_of("backward:\n  differentiable: [x]\n  tolerances: {float99: {atol: 1}}").find("unknown dtype 'float99'"), std::string::npos);
  {  // an input named like a gradient (rows_seen renamed grad_rows)
    std::string text = manifest("backward:\n  differentiable: [x]");
    for (std::size_t at; (at = text.find("rows_seen")) != std::string::npos;) text.replace(at, 9, "grad_rows");
    auto m = parse(text);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.error().message.find("backward: input 'grad_rows' begins with grad_"), std::string::npos) << m.error().message;
  }
  EXPECT_NE(error_of("backward:\n  differentiable: [x]\n  modes: [fwd, sideways]").find("backward: modes: 'sideways' is no mode; the modes are fwd"),
            std::string::npos)
      << error_of("backward:\n  differentiable: [x]\n  modes: [fwd, sideways]");
  // Its tensors' names are grad_<output> and grad_<input>: none may be declared already.
  std::string clash = manifest("backward:\n  differentiable: [x]");
  clash.replace(clash.find("{name: eps,"), 11, "{name: grad_y,");  // an attribute (an input may not begin with grad_ at all)
  auto m = parse(clash);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("'grad_y' (the gradient of output 'y') is a declared name already"), std::string::npos) << m.error().message;
  // An op whose output is its input, written in place, has none here.
  std::string inplace = manifest("backward:\n  differentiable: [x]");
  inplace.replace(inplace.find("  - {name: rstd, shape: [x.0], dtype: float32}"), 46, "  - {name: w_out, inplace: weight}");
  auto in = parse(inplace);
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.error().message.find("output 'w_out' is written in place"), std::string::npos) << in.error().message;
}

TEST(Backward, ACasesBackwardReadsItsInputsAndEachOutputsGradientAndWritesEachDifferentiableInputsGradient) {
  auto m = parse(manifest("backward:\n  differentiable: [x, weight]\n  tolerances: {float32: {atol: 1.0e-4, rtol: 2.0e-4}}"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto cases = bb::expand_cases(*m);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_GE(cases->size(), 2u);
  const bb::ConcreteCase& f32 = (*cases)[0];
  auto b = bb::backward_case(f32, *m);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->id, "bwd:" + f32.id);
  EXPECT_EQ(b->mode, bb::Mode::bwd);
  EXPECT_NE(b->seed, f32.seed) << "the forward's tensors, drawn anew: values no forward call saw";
  EXPECT_EQ(b->seed, bb::mix_seed(f32.seed, "bwd")) << "the same every run";
  ASSERT_EQ(b->inputs.size(), 5u);
  EXPECT_EQ(b->inputs[0].name, "x");
  EXPECT_EQ(b->inputs[2].name, "rows_seen");
  EXPECT_EQ(b->inputs[3].name, "grad_y");
  EXPECT_EQ(b->inputs[3].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(b->inputs[4].name, "grad_rstd");
  EXPECT_EQ(b->inputs[4].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(b->inputs[4].dtype, bb::DType::float32);
  EXPECT_EQ(b->inputs[3].init.kind, bb::InitKind::randn);
  EXPECT_DOUBLE_EQ(b->inputs[3].init.b, 0.1) << "dy = 0.1 * randn, as tritonbench draws it";
  ASSERT_EQ(b->outputs.size(), 2u);
  EXPECT_EQ(b->outputs[0].name, "grad_x");
  EXPECT_EQ(b->outputs[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(b->outputs[1].name, "grad_weight");
  EXPECT_EQ(b->outputs[1].shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(b->outputs[1].inplace_input, -1);
  EXPECT_DOUBLE_EQ(b->outputs[0].tolerance.rtol, 2e-4) << "the backward's own tolerance";
  EXPECT_FALSE(b->flops) << "the forward's work is not the backward's";
  double least = 0;
  for (const auto& t : b->inputs) least += static_cast<double>(t.nbytes());
  for (const auto& t : b->outputs) least += static_cast<double>(t.nbytes());
  ASSERT_TRUE(b->bytes);
  EXPECT_DOUBLE_EQ(*b->bytes, least) << "its least traffic: each tensor read once, each gradient written once";
  // float16: the backward gives none, so the op's.
  auto f16 = bb::backward_case((*cases)[1], *m);
  ASSERT_TRUE(f16.ok());
  EXPECT_EQ(f16->outputs[0].dtype, bb::DType::float16);
  EXPECT_DOUBLE_EQ(f16->outputs[0].tolerance.atol, 1e-3);

  // fwd_bwd: the backward call's inputs, the forward's outputs then the gradients, each its own tolerance.
  const bb::ConcreteCase pair = bb::pair_case(f32, *b);
  EXPECT_EQ(pair.id, "fwd_bwd:" + f32.id);
  EXPECT_EQ(pair.mode, bb::Mode::fwd_bwd);
  EXPECT_EQ(bb::forward_case_id(pair.id), f32.id);
  EXPECT_NE(pair.seed, b->seed);
  EXPECT_NE(pair.seed, f32.seed);
  ASSERT_EQ(pair.inputs.size(), 5u);
  EXPECT_EQ(pair.inputs[3].name, "grad_y");
  ASSERT_EQ(pair.outputs.size(), 4u);
  EXPECT_EQ(pair.outputs[0].name, "y");
  EXPECT_EQ(pair.outputs[1].name, "rstd");
  EXPECT_EQ(pair.outputs[2].name, "grad_x");
  EXPECT_DOUBLE_EQ(pair.outputs[2].tolerance.rtol, 2e-4);
  EXPECT_DOUBLE_EQ(pair.outputs[0].tolerance.rtol, f32.outputs[0].tolerance.rtol);
  ASSERT_TRUE(pair.bytes);
  EXPECT_DOUBLE_EQ(*pair.bytes, *f32.bytes + *b->bytes) << "both passes' traffic";
}

TEST(Backward, AnIntegerInputHasNoGradient) {
  auto m = parse(manifest("backward:\n  differentiable: [x]", "int32"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto cases = bb::expand_cases(*m);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  auto b = bb::backward_case(cases->front(), *m);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("gen_input.yaml:14: backward: input 'x' is int32"), std::string::npos) << b.error().message;
  auto forward_only = parse(manifest(""));
  ASSERT_TRUE(forward_only.ok());
  EXPECT_FALSE(bb::backward_case(cases->front(), *forward_only).ok());
}

namespace {

const std::string kBackward = std::string(BB_FIXTURE_ROOTS) + "/backward/scale/";

// The backward pass of case `index` of the fixture op, judged in this process: `impl`'s
// scale_backward_impl against the reference's scale_backward_reference.
bb::TestResult backward_test(const std::string& impl, std::size_t index = 1, bool time = false) {
  auto m = bb::load_manifest(kBackward + "gen_input.yaml", "scale");
  if (!m.ok()) {
    ADD_FAILURE() << m.error().message;
    return {};
  }
  auto cases = bb::expand_cases(*m);
  if (!cases.ok() || index >= cases->size()) {
    ADD_FAILURE() << "no case " << index;
    return {};
  }
  auto b = bb::backward_case((*cases)[index], *m);
  if (!b.ok()) {
    ADD_FAILURE() << b.error().message;
    return {};
  }
  bb::TestRequest req = bb::case_request("scale", *b, kBackward);
  req.impl = {bb::Target::Kind::kernel_impl, kBackward + impl, bb::Target::Pass::backward};
  req.reference = {bb::Target::Kind::reference, kBackward + "scale_reference.so", bb::Target::Pass::backward};
  req.time = time;
  req.timing.rule.min_samples = 3;
  req.timing.rule.timeout = 0.2;
  return bb::run_test_in_process(req);
}

}  // namespace

// A backward kernel is a call like any other: its gradient checked against the reference's
// backward, every defence of the forward's on it (a poisoned gradient buffer, inputs that must
// stay unchanged).
TEST(Backward, ABackwardKernelIsCheckedAgainstTheReferencesBackward) {
  auto good = backward_test("scale_bwd_good.so");
  EXPECT_EQ(good.outcome.verdict, bb::Verdict::pass) << good.outcome.message;
  EXPECT_EQ(good.id.case_id, "bwd:correctness/small[n=1000]");
  auto missing = backward_test("scale_bwd_missing_term.so");
  EXPECT_EQ(missing.outcome.verdict, bb::Verdict::fail) << missing.outcome.message;
  EXPECT_NE(missing.outcome.message.find("grad_x"), std::string::npos) << "the gradient that is wrong is named: " << missing.outcome.message;
  auto partial = backward_test("scale_bwd_partial.so");
  EXPECT_EQ(partial.outcome.verdict, bb::Verdict::unwritten) << partial.outcome.message;
  EXPECT_NE(partial.outcome.message.find("grad_x"), std::string::npos) << partial.outcome.message;
  auto accumulate = backward_test("scale_bwd_accumulate.so");
  EXPECT_EQ(accumulate.outcome.verdict, bb::Verdict::fail) << "it adds to a poisoned buffer: " << accumulate.outcome.message;
  EXPECT_NE(accumulate.outcome.message.find("output 'grad_x'"), std::string::npos) << accumulate.outcome.message;
  auto none = backward_test("scale_forward_only.so");
  EXPECT_EQ(none.outcome.verdict, bb::Verdict::error) << none.outcome.message;
  EXPECT_NE(none.outcome.message.find("missing symbol scale_backward_impl"), std::string::npos) << none.outcome.message;
}

// Timed, a backward meets the forward's timing defences: the checked calls at the host's secret
// places (a backward right only where it guesses it is checked FAILs), and its time is the
// whole of its call (one that computes the forward again inside it is honest: PASS, timed).
TEST(Backward, ATimedBackwardMeetsTheCheckedCallsAndIsTimedWhole) {
  auto lazy = backward_test("scale_bwd_lazy.so", 2, true);
  EXPECT_EQ(lazy.outcome.verdict, bb::Verdict::fail) << lazy.outcome.message;
  EXPECT_NE(lazy.outcome.message.find("wrong while timed"), std::string::npos) << lazy.outcome.message;
  EXPECT_FALSE(lazy.performance.timing) << "no time for what did not pass";
  auto recompute = backward_test("scale_bwd_recompute.so", 2, true);
  ASSERT_EQ(recompute.outcome.verdict, bb::Verdict::pass) << recompute.outcome.message;
  ASSERT_TRUE(recompute.performance.timing);
  EXPECT_EQ(recompute.id.case_id, "bwd:performance/big");
  EXPECT_GE(recompute.performance.timing->stats.samples, 3u);
  EXPECT_GT(recompute.performance.timing->stats.median, 0);
}
