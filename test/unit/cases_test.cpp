#include <gtest/gtest.h>

#include "cases.hpp"
#include "temp_manifest.hpp"

namespace {

bb::Expected<std::vector<bb::ConcreteCase>> expand(const std::string& yaml) {
  auto m = bb::load_manifest(write_manifest("op", yaml), "op");
  if (!m) return m.error();
  return bb::expand_cases(*m);
}

const char* kSweep = R"(op: op
seed: 5
inputs:
  - name: x
  - {name: w, init: ones}
attributes:
  - {name: scale, type: float, default: 1.0}
  - {name: k, type: int}
  - {name: flag, type: bool, default: false}
  - {name: mode, type: string, default: a}
outputs:
  - {name: y, shape: [x.0, w.-1], dtype: float32}
  - {name: z, shape: x, dtype: w}
  - {name: x_out, inplace: x}
tolerances:
  float16: {atol: 0.25, rtol: 0.5}
flops: 2 * rows * cols
bytes: numel(x) * sizeof(x) + numel(y) * sizeof(dtype)
tests:
  correctness:
    - name: grid
      params:
        dtype: [float32, float16, bfloat16]
        rows: [1, 4]
        cols: [8]
        on: [true]
      inputs:
        x: {shape: [rows, cols], dtype: dtype}
        w: {shape: [cols * 2], dtype: int32}
      attributes: {k: rows * 10, flag: on, mode: dtype}
      tolerances: {bfloat16: {atol: 1, rtol: 1}}
)";

}  // namespace

TEST(Cases, CartesianProductInOrder) {
  auto cs = expand(kSweep);
  ASSERT_TRUE(cs.ok()) << cs.error().message;
  ASSERT_EQ(cs->size(), 6u);
  EXPECT_EQ((*cs)[0].id, "correctness/grid[dtype=float32,rows=1,cols=8,on=true]");
  EXPECT_EQ((*cs)[1].id, "correctness/grid[dtype=float32,rows=4,cols=8,on=true]");
  EXPECT_EQ((*cs)[5].id, "correctness/grid[dtype=bfloat16,rows=4,cols=8,on=true]");
  for (size_t i = 0; i < cs->size(); ++i) EXPECT_EQ((*cs)[i].index, static_cast<int>(i));
}

TEST(Cases, ShapesDtypesOutputsAttributesAndWorkResolve) {
  auto cs = expand(kSweep);
  ASSERT_TRUE(cs.ok()) << cs.error().message;
  const auto& c = (*cs)[3];  // float16, rows=4
  EXPECT_EQ(c.inputs[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c.inputs[0].dtype, bb::DType::float16);
  EXPECT_EQ(c.inputs[1].shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(c.inputs[1].dtype, bb::DType::int32);
  EXPECT_EQ(c.inputs[1].init.kind, bb::InitKind::ones);  // op-level default kept
  EXPECT_EQ(c.outputs[0].shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(c.outputs[0].dtype, bb::DType::float32);
  EXPECT_EQ(c.outputs[1].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c.outputs[1].dtype, bb::DType::int32);
  EXPECT_EQ(c.outputs[2].inplace_input, 0);
  EXPECT_EQ(c.outputs[2].dtype, bb::DType::float16);
  EXPECT_EQ(std::get<double>(c.attrs[0].second), 1.0);  // default
  EXPECT_EQ(std::get<int64_t>(c.attrs[1].second), 40);  // expression over a parameter
  EXPECT_EQ(std::get<bool>(c.attrs[2].second), true);   // bool parameter
  EXPECT_EQ(std::get<std::string>(c.attrs[3].second), "float16");
  EXPECT_EQ(*c.flops, 2.0 * 4 * 8);
  EXPECT_EQ(*c.bytes, 32.0 * 2 + 64.0 * 2);
  // Tolerances: op-level for float16 outputs, case-level for bfloat16, defaults for the rest.
  EXPECT_EQ(c.outputs[2].tolerance.atol, 0.25);
  EXPECT_EQ((*cs)[5].outputs[2].tolerance.atol, 1.0);
  EXPECT_EQ((*cs)[0].outputs[2].tolerance.rtol, 1.3e-6);
}

TEST(Cases, SeedsAreStablePerCaseAndDiffer) {
  auto a = expand(kSweep), b = expand(kSweep);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[2].seed, (*b)[2].seed);
  EXPECT_NE((*a)[2].seed, (*a)[3].seed);
}

TEST(Cases, ExpansionErrorsNameTheLine) {
  auto e = expand("op: op\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests:\n  correctness:\n    - name: a\n      inputs: {x: {shape: [n]}}\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("gen_input.yaml:7:"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("unknown name 'n'"), std::string::npos) << e.error().message;

  e = expand("op: op\ninputs: [x]\noutputs: [{name: y, shape: x}]\ntests:\n  correctness:\n    - name: a\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("gives no shape for input 'x'"), std::string::npos) << e.error().message;

  e = expand("op: op\ninputs: [{name: x, shape: [2], dtype: floatx}]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a}]}\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("dtype 'floatx'"), std::string::npos) << e.error().message;

  e = expand("op: op\ninputs: [{name: x, shape: [2]}]\nattributes: [{name: k, type: int}]\noutputs: [{name: y, shape: x}]\ntests: {correctness: [{name: a}]}\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("attribute 'k' has no default"), std::string::npos) << e.error().message;

  e = expand("op: op\ninputs: [{name: x, shape: [2]}]\nattributes: [{name: k, type: int}]\noutputs: [{name: y, shape: x}]\n"
             "tests: {correctness: [{name: a, attributes: {k: 1.5}}]}\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("expected an integer"), std::string::npos) << e.error().message;
}
