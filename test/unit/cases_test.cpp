#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "plan/cases.hpp"
#include "plan/value_variants.hpp"
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

// --random-cases: drawn from each sweep's range by the seed, appended after the listed cases.
TEST(Cases, RandomCasesAreDrawnFromEachSweepsRangeByTheSeed) {
  auto text = [](int seed) {
    return fmt::format(R"(op: drawn
seed: {}
inputs:
  - {{name: x, dtype: float32}}
outputs:
  - {{name: y, shape: x, dtype: x}}
tests:
  correctness:
    - name: sweep
      params: {{n: [8, 64, 100], alpha: [0.5, 2.0], mode: [a, b]}}
      inputs: {{x: {{shape: [n]}}}}
    - name: fixed
      inputs: {{x: {{shape: [3]}}}}
)", seed);
  };
  auto expand = [&](int seed, int n) {
    auto m = bb::load_manifest(write_manifest("drawn", text(seed)), "drawn");
    EXPECT_TRUE(m) << (m ? "" : m.error().message);
    auto cases = bb::expand_cases(*m, bb::CaseExpansion{n, 0});
    EXPECT_TRUE(cases) << (cases ? "" : cases.error().message);
    return *cases;
  };
  const auto listed = expand(1, 0);
  const auto with = expand(1, 5);
  ASSERT_EQ(listed.size(), 13u);   // 3 x 2 x 2 + 1
  ASSERT_EQ(with.size(), 18u);     // and 5 for the one sweep
  for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(with[i].id, listed[i].id);  // listed ones keep their places
  std::set<int64_t> sizes;
  for (size_t i = listed.size(); i < with.size(); ++i) {
    const auto& c = with[i];
    EXPECT_EQ(c.kind, bb::CaseKind::correctness);
    EXPECT_EQ(c.name, fmt::format("sweep~random{}", i - listed.size()));
    EXPECT_EQ(c.index, static_cast<int>(i));
    const int64_t n = std::get<int64_t>(c.params[0].second);
    EXPECT_GE(n, 8);
    EXPECT_LE(n, 100);
    EXPECT_EQ(c.inputs[0].shape, std::vector<int64_t>{n});
    const double alpha = std::get<double>(c.params[1].second);
    EXPECT_GE(alpha, 0.5);
    EXPECT_LE(alpha, 2.0);
    const std::string mode = std::get<std::string>(c.params[2].second);
    EXPECT_TRUE(mode == "a" || mode == "b") << mode;
    sizes.insert(n);
  }
  EXPECT_GT(sizes.size(), 1u);  // drawn, not one value
  // The same seed draws the same cases; another seed, others.
  const auto again = expand(1, 5), other = expand(2, 5);
  for (size_t i = listed.size(); i < with.size(); ++i) EXPECT_EQ(again[i].id, with[i].id);
  bool differs = false;
  for (size_t i = listed.size(); i < with.size(); ++i) differs = differs || other[i].id != with[i].id;
  EXPECT_TRUE(differs);
}

// Initialiser bounds that follow the case (scaled logits, token ids below the table's rows),
// checked per case; an output's own tolerance, below a case's and above the op's.
TEST(Cases, BoundsAreExpressionsAndAnOutputHasItsOwnTolerance) {
  auto c = expand(R"yaml(op: op
inputs:
  - {name: table, dtype: float32, init: {randn: {mean: 0, std: "1 / sqrt(dim)"}}}
  - {name: ids, dtype: int32, init: {randint: {low: 0, high: table.0}}}
  - {name: fill, dtype: float32, init: {full: "1 / n"}}
outputs:
  - {name: out, shape: [ids.0, table.1], dtype: table, tolerance: {atol: 0, rtol: 0}}
  - {name: idx, shape: ids, dtype: float16, tolerances: {float16: {atol: 0.5, rtol: 0}}}
  - {name: rest, shape: fill, dtype: float32}
tolerances:
  float32: {atol: 0.125, rtol: 0.25}
tests:
  correctness:
    - name: a
      params: {rows: [5, 64], dim: [16], n: [4]}
      inputs: {table: {shape: [rows, dim]}, ids: {shape: [n]}, fill: {shape: [n]}}
    - name: b
      params: {rows: [7], dim: [4], n: [2]}
      inputs: {table: {shape: [rows, dim]}, ids: {shape: [n]}, fill: {shape: [n]}}
      tolerances: {float32: {atol: 1, rtol: 1}}
)yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->size(), 3u);
  const auto& a = (*c)[0];
  EXPECT_DOUBLE_EQ(a.inputs[0].init.b, 0.25);  // std 1/sqrt(16)
  EXPECT_DOUBLE_EQ(a.inputs[1].init.a, 0);
  EXPECT_DOUBLE_EQ(a.inputs[1].init.b, 5);     // below the table's 5 rows
  EXPECT_DOUBLE_EQ((*c)[1].inputs[1].init.b, 64);
  EXPECT_DOUBLE_EQ(a.inputs[2].init.a, 0.25);  // full 1/4
  EXPECT_DOUBLE_EQ(a.outputs[0].tolerance.atol, 0);  // its own, over the op's float32
  EXPECT_DOUBLE_EQ(a.outputs[0].tolerance.rtol, 0);
  EXPECT_DOUBLE_EQ(a.outputs[1].tolerance.atol, 0.5);  // its own per dtype
  EXPECT_DOUBLE_EQ(a.outputs[2].tolerance.atol, 0.125);  // the op's
  EXPECT_DOUBLE_EQ((*c)[2].outputs[0].tolerance.atol, 1);  // the case's, over the output's own

  // A bound that cannot be evaluated, or bounds that cross, name the line.
  auto bad = expand("op: op\ninputs:\n  - {name: x, init: {randint: {low: 0, high: width}}}\noutputs: [{name: y, shape: x}]\n"
                    "tests: {correctness: [{name: a, inputs: {x: {shape: [4]}}}]}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("gen_input.yaml:3: the initialiser of input 'x': unknown name 'width'"), std::string::npos)
      << bad.error().message;
  bad = expand("op: op\ninputs:\n  - {name: x, init: {uniform: {low: n, high: 1}}}\noutputs: [{name: y, shape: x}]\n"
               "tests: {correctness: [{name: a, params: {n: [2]}, inputs: {x: {shape: [4]}}}]}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("expected low < high, got [2, 1)"), std::string::npos) << bad.error().message;
}

// Value variants: after every case of the manifest and every random one (their places kept), each
// correctness case's variants that some input gets: "<name>~<variant>" before the parameters, the
// case's seed, the inputs that get it changed, the others as they were, atol grown with what is
// expected. By default a floating input drawn at random gets zeros, tiny, huge, mixed, denormal;
// an input's `variants:` pins or excludes them, a case's `variants:` bounds them, the run's set
// bounds them all. A pin an input cannot take is an error with its line.
TEST(Cases, ValueVariantsFollowTheCaseTheManifestAndTheRun) {
  const char* text = R"(op: vv
seed: 3
inputs:
  - name: x
  - {name: w, init: ones}
  - {name: ids, dtype: int32}
  - {name: logits, variants: [huge, nan]}
outputs:
  - {name: y, shape: x, dtype: x}
tests:
  correctness:
    - name: grid
      params: {n: [4, 8]}
      inputs: {x: {shape: [n]}, w: {shape: [n]}, ids: {shape: [n]}, logits: {shape: [n]}}
    - name: bounded
      variants: [tiny, huge]
      inputs: {x: {shape: [2]}, w: {shape: [2]}, ids: {shape: [2]}, logits: {shape: [2], variants: none}}
  performance:
    - name: big
      inputs: {x: {shape: [64]}, w: {shape: [64]}, ids: {shape: [64]}, logits: {shape: [64]}}
)";
  auto m = bb::load_manifest(write_manifest("vv", text), "vv");
  ASSERT_TRUE(m) << m.error().message;
  auto plain = bb::expand_cases(*m, bb::CaseExpansion{0, 0});
  ASSERT_TRUE(plain) << plain.error().message;
  ASSERT_EQ(plain->size(), 4u);
  auto all = bb::expand_cases(*m, bb::CaseExpansion{0, bb::default_variants() | bb::variant_bit(bb::ValueVariant::nan)});
  ASSERT_TRUE(all) << all.error().message;
  for (size_t i = 0; i < plain->size(); ++i) EXPECT_EQ((*all)[i].id, (*plain)[i].id);
  std::vector<std::string> ids;
  for (size_t i = plain->size(); i < all->size(); ++i) ids.push_back((*all)[i].id);
  // grid: x's five defaults, logits' huge and nan; bounded: tiny and huge on x alone.
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "correctness/grid~zeros[n=4]", "correctness/grid~tiny[n=4]", "correctness/grid~huge[n=4]", "correctness/grid~mixed[n=4]",
                     "correctness/grid~denormal[n=4]", "correctness/grid~nan[n=4]", "correctness/grid~zeros[n=8]", "correctness/grid~tiny[n=8]",
                     "correctness/grid~huge[n=8]", "correctness/grid~mixed[n=8]", "correctness/grid~denormal[n=8]", "correctness/grid~nan[n=8]",
                     "correctness/bounded~tiny", "correctness/bounded~huge"}));
  const auto& base = (*all)[0];
  for (size_t i = plain->size(); i < all->size(); ++i) {
    const auto& c = (*all)[i];
    EXPECT_EQ(c.index, static_cast<int>(i));
    EXPECT_EQ(c.kind, bb::CaseKind::correctness);
    EXPECT_TRUE(c.outputs[0].tolerance.scale_atol) << c.id;
    if (c.name.rfind("grid", 0) != 0 || std::get<int64_t>(c.params[0].second) != 4) continue;
    EXPECT_EQ(c.seed, base.seed) << "the case's own draws: " << c.id;
    EXPECT_EQ(c.name, "grid~" + c.variant);
    EXPECT_EQ(c.inputs[1].init.kind, bb::InitKind::ones) << "w keeps its constant";
    EXPECT_EQ(c.inputs[1].init.twist, 0u);
    EXPECT_EQ(c.inputs[2].init.kind, bb::InitKind::randint) << "ids are integers";
    EXPECT_EQ(c.inputs[2].init.twist, 0u);
    const bool on_x = c.variant != "nan", on_logits = c.variant == "huge" || c.variant == "nan";
    EXPECT_EQ(c.inputs[0].init.kind != base.inputs[0].init.kind || c.inputs[0].init.twist != 0, on_x) << c.id;
    EXPECT_EQ(c.inputs[3].init.twist != 0, on_logits) << c.id;
  }
  EXPECT_FALSE((*plain)[0].outputs[0].tolerance.scale_atol);

  auto error_of = [](const std::string& yaml) {
    auto mm = bb::load_manifest(write_manifest("vv", yaml), "vv");
    if (!mm) return mm.error().message;
    auto cc = bb::expand_cases(*mm, bb::default_expansion());
    return cc ? std::string() : cc.error().message;
  };
  const std::string head = "op: vv\noutputs:\n  - {name: y, shape: x, dtype: x}\ntests:\n  correctness:\n    - inputs: {x: {shape: [2]}}\n";
  EXPECT_NE(error_of("inputs:\n  - {name: x, dtype: int32, variants: [tiny]}\n" + head).find(":2: input 'x' is int32: of the value variants it can take only zeros"),
            std::string::npos)
      << error_of("inputs:\n  - {name: x, dtype: int32, variants: [tiny]}\n" + head);
  EXPECT_NE(error_of("inputs:\n  - {name: x, variants: [tiny, hugh]}\n" + head).find("'hugh' is no value variant"), std::string::npos);
  EXPECT_NE(error_of("inputs:\n  - {name: x, init: {npy: x.npy}, variants: [zeros]}\n" + head).find("read from a file"), std::string::npos);
  EXPECT_EQ(error_of("inputs:\n  - {name: x, dtype: int32, variants: [zeros]}\n" + head), "");
}

TEST(Cases, VariantSetsReadAndWriteBack) {
  EXPECT_EQ(*bb::parse_variant_set("default"), bb::default_variants());
  EXPECT_EQ(*bb::parse_variant_set("none"), 0u);
  EXPECT_EQ(*bb::parse_variant_set("all"), bb::kAllVariants);
  EXPECT_EQ(*bb::parse_variant_set("tiny,nan"), bb::variant_bit(bb::ValueVariant::tiny) | bb::variant_bit(bb::ValueVariant::nan));
  for (const char* s : {"default", "none", "all", "tiny,nan", "zeros"}) EXPECT_EQ(bb::variant_set_text(*bb::parse_variant_set(s)), s);
  EXPECT_FALSE(bb::parse_variant_set("tiny,,huge"));
  EXPECT_FALSE(bb::parse_variant_set(""));
}

// A typo in a sweep's dtype list is reported as what it is: the parameter, its value there, the
// case and the nearest dtype (it used to read "dtype 'dtype' of input 'x'" at the input's line).
TEST(Cases, ADtypeTypoInASweepNamesTheParameterAndTheValue) {
  auto cases = expand(R"(op: op
inputs:
  - name: x
outputs:
  - {name: y, shape: x, dtype: x}
tests:
  correctness:
    - name: rows
      params: {dtype: [float32, flaot16]}
      inputs: {x: {shape: [4], dtype: dtype}}
)");
  ASSERT_FALSE(cases);
  EXPECT_NE(cases.error().message.find(":8: dtype of input 'x': parameter 'dtype' of case 'rows' is 'flaot16' here, no dtype (did you mean "
                                       "'float16'?)"),
            std::string::npos)
      << cases.error().message;
  auto plain = expand("op: op\ninputs:\n  - {name: x, dtype: bflaot16}\noutputs:\n  - {name: y, shape: x, dtype: x}\ntests:\n  correctness:\n"
                      "    - inputs: {x: {shape: [4]}}\n");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message.find("dtype 'bflaot16' of input 'x' (did you mean 'bfloat16'?)"), std::string::npos) << plain.error().message;
}
