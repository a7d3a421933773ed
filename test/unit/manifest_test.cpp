#include <gtest/gtest.h>

#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "temp_manifest.hpp"

namespace {

const char* kFull = R"(op: norm
description: a complete manifest
seed: 99
devices: [cpu]
baseline: reference
inputs:
  - {name: x, dtype: float32}
  - name: w
attributes:
  - {name: eps, type: float, default: 1.0e-6}
  - {name: axes, type: int_list, default: [1, 2]}
  - {name: mode, type: string}
outputs:
  - {name: y, shape: x, dtype: x}
  - {name: stats, shape: [x.0, 2], dtype: float32}
  - {name: x_out, inplace: x}
tolerances:
  float16: {atol: 1.0e-3, rtol: 1.0e-3}
flops: 3 * numel(x)
tests:
  correctness:
    - name: sweep
      params:
        dtype: [float32, float16]
        rows: [1, 3]
      inputs:
        x: {shape: [rows, 8], dtype: dtype, init: {uniform: {low: -1, high: 1}}}
        w: {shape: [8], dtype: dtype, init: ones}
      attributes: {mode: fast}
      tolerances: {float32: {atol: 0.5, rtol: 0}}
  performance:
    - name: big
      inputs:
        x: {shape: [1024, 1024]}
        w: {shape: [1024], init: {full: 3}}
      attributes: {mode: slow, eps: 0.1}
      bytes: 2 * numel(x) * sizeof(x)
)";

std::string load_error(const std::string& yaml) {
  auto m = bb::load_manifest(write_manifest("norm", yaml), "norm");
  return m.ok() ? std::string("(loaded)") : m.error().message;
}

}  // namespace

TEST(Manifest, LoadsEveryCapability) {
  auto m = bb::load_manifest(write_manifest("norm", kFull), "norm");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->op, "norm");
  EXPECT_EQ(m->seed, 99u);
  ASSERT_EQ(m->inputs.size(), 2u);
  EXPECT_EQ(m->inputs[0].defaults.dtype->text, "float32");
  ASSERT_EQ(m->attributes.size(), 3u);
  EXPECT_EQ(std::get<double>(*m->attributes[0].default_value), 1e-6);
  EXPECT_EQ(std::get<std::vector<int64_t>>(*m->attributes[1].default_value), (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(m->attributes[2].default_value.has_value());
  ASSERT_EQ(m->outputs.size(), 3u);
  EXPECT_EQ(*m->outputs[2].inplace, "x");
  EXPECT_EQ(m->outputs[1].shape.size(), 2u);
  EXPECT_EQ(m->tolerances.at(bb::DType::float16).atol, 1e-3);
  ASSERT_EQ(m->cases.size(), 2u);
  EXPECT_EQ(m->cases[0].kind, bb::CaseKind::correctness);
  EXPECT_EQ(m->cases[1].kind, bb::CaseKind::performance);
  EXPECT_EQ(m->cases[0].params.size(), 2u);
  EXPECT_EQ(m->cases[0].inputs.at("x").init->kind, bb::InitKind::uniform);
  EXPECT_EQ(m->cases[0].inputs.at("x").init->a, -1);
  EXPECT_EQ(m->cases[1].inputs.at("w").init->kind, bb::InitKind::full);
  EXPECT_EQ(m->cases[1].inputs.at("w").init->a, 3);
}

TEST(Manifest, ErrorsNameFileLineAndExpectation) {
  // Unknown key, with the line it stands on.
  std::string e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests:\n  correctness:\n    - name: a\n      shapes: [1]\n");
  EXPECT_NE(e.find("gen_input.yaml:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'shapes'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests:\n  correctness:\n    - inputs: {x: {shape: [2], init: {uniform: {low: 1, hgih: 2}}}}\n");
  EXPECT_NE(e.find(":6:"), std::string::npos) << e;
  EXPECT_NE(e.find("'hgih'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests:\n  correctness:\n    - inputs: {x: {shape: [2], init: gaussian}}\n");
  EXPECT_NE(e.find("unknown initialiser 'gaussian'"), std::string::npos) << e;

  e = load_error("op: other\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find(":1:"), std::string::npos) << e;
  EXPECT_NE(e.find("folder is 'norm'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: z}]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find("'z' is not an input"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, inplace: q}]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find("inplace: 'q' is not an input"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a, inputs: {q: {shape: [1]}}}]}\n");
  EXPECT_NE(e.find("case input 'q' is not declared"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\nattributes: [{name: k, type: complex}]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find(":3:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown attribute type 'complex'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntolerances: {float12: {atol: 1}}\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find("unknown dtype 'float12'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\n");
  EXPECT_NE(e.find("expected 'tests:'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x, x]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find("declared twice"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x]\noutputs: [{name: y, shape: x}]\ndevices: [tpu]\ntests: {correctness: [{name: a}]}\n");
  EXPECT_NE(e.find("unknown device 'tpu'"), std::string::npos) << e;

  e = load_error("op: norm\ninputs: [x\n");
  EXPECT_NE(e.find("invalid YAML"), std::string::npos) << e;

  auto missing = bb::load_manifest("/nonexistent/gen_input.yaml", "norm");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
}

TEST(Manifest, ACaseNamesTheDevicesItRunsOn) {
  auto m = bb::parse_manifest(R"(op: t
devices: [cpu, cuda]
inputs:
  - {name: x, dtype: float32}
outputs:
  - {name: y, shape: x, dtype: x}
tests:
  performance:
    - {name: small, inputs: {x: {shape: [16]}}}
    - {name: big, devices: [cuda], inputs: {x: {shape: [1024]}}}
)", "t/gen_input.yaml", "t");
  ASSERT_TRUE(m) << m.error().message;
  auto cases = bb::expand_cases(*m);
  ASSERT_TRUE(cases);
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_TRUE((*cases)[0].runs_on("cpu"));
  EXPECT_TRUE((*cases)[0].runs_on("cuda"));
  EXPECT_FALSE((*cases)[1].runs_on("cpu"));
  EXPECT_TRUE((*cases)[1].runs_on("cuda"));
}
