// The gen_input.yaml manifest: what an op's inputs, attributes, outputs and tests are.
// load_manifest() checks structure and types; expand_cases() (cases.hpp) resolves sweeps.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dtype.hpp"
#include "plan/mode.hpp"
#include "expected.hpp"
#include "plan/init_spec.hpp"

namespace bb {

// A value of a sweep parameter.
using Scalar = std::variant<int64_t, double, bool, std::string>;
// Whether `v` is an integer an int64_t holds (a cast of anything else is undefined behaviour).
inline bool fits_int64(double v) {
  if (!(v >= -9.2e18 && v <= 9.2e18)) return false;  // NaN too
  return v == static_cast<double>(static_cast<int64_t>(v));
}
std::string scalar_to_string(const Scalar& s);

// Source text of an expression (or a name) and where it stands.
struct Sourced {
  std::string text;
  int line = 0;
};

// An input's shape/dtype/init; the op-level entry gives defaults a case may override.
struct TensorSpec {
  std::optional<std::vector<Sourced>> shape;
  std::optional<Sourced> dtype;  // dtype name or the name of a parameter holding one
  std::optional<InitSpec> init;
  // `variants:` the value variants this input gets (value_variants.hpp's VariantSet), pinned or
  // excluded; unset: the default set for a floating input of a random initialiser, else none.
  std::optional<uint32_t> variants;
  int variants_line = 0;
  int line = 0;
};

struct InputSpec {
  std::string name;
  TensorSpec defaults;
  int line = 0;
};

enum class AttrType { int_, float_, bool_, string, int_list, float_list };
const char* attr_type_name(AttrType t);
using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;

struct AttrSpec {
  std::string name;
  AttrType type = AttrType::float_;
  std::optional<AttrValue> default_value;
  int line = 0;
};

// A case's raw attribute value: scalars or a list of them, resolved against the attribute's
// type and the sweep parameters when cases are expanded.
struct RawAttr {
  std::vector<Scalar> items;
  bool is_list = false;
  int line = 0;
};

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  // atol times the largest finite |expected| where that is above 1 (a value variant's outputs:
  // its inputs made huge scale every absolute error with them; cases.hpp).
  bool scale_atol = false;
};
using ToleranceTable = std::map<DType, Tolerance>;

struct OutputSpec {
  std::string name;
  std::optional<std::string> inplace;  // the input this output aliases
  std::optional<std::string> shape_like;  // same shape as this input
  std::vector<Sourced> shape;             // or explicit dimension expressions
  Sourced dtype;                          // input name, dtype name, or parameter name
  std::optional<Tolerance> tolerance;  // its own, whatever its dtype (below a case's, above the op's)
  ToleranceTable tolerances;          // its own per dtype (above `tolerance`)
  int line = 0;
};

enum class CaseKind { correctness, performance };
const char* case_kind_name(CaseKind k);

struct CaseSpec {
  std::string name;
  CaseKind kind = CaseKind::correctness;
  int line = 0;
  std::vector<std::pair<std::string, std::vector<Scalar>>> params;  // sweep, in order
  std::map<std::string, TensorSpec> inputs;                         // overrides per input
  std::map<std::string, TensorSpec> outputs;                        // overrides per output: shape, dtype
  std::vector<std::pair<std::string, RawAttr>> attrs;
  ToleranceTable tolerances;
  std::optional<Sourced> flops;
  std::optional<Sourced> bytes;
  std::vector<std::string> devices;  // empty: every device of the op
  std::optional<uint32_t> variants;  // `variants:` the value variants this case may get at most
};

// What the manifest declares of one implementation (`implementations: {NAME: {...}}`), added to
// what its library's info record declares.
struct ImplDeclaration {
  std::string name;                     // as --impls names it: <stem> or <op>__<stem>
  std::vector<Sourced> preconditions;   // conditions every case it supports meets (expr.hpp)
  std::vector<std::string> dtypes;      // as the info record's dtypes (plugin.h)
  int line = 0;
};

// `backward:` what the op's backward pass reads and writes (docs/MANIFEST.md, "Backward"). Its
// call (backward_case.hpp) takes every forward input, then the gradient of each output
// (grad_<output>); it writes the gradient of each differentiable input (grad_<input>), within
// `tolerances` (its own; the op's where a dtype has none).
struct BackwardSpec {
  std::vector<std::string> differentiable;  // inputs, in the manifest's order
  ToleranceTable tolerances;
  // `modes:` what a run checks and times of this op where --mode does not say (mode.hpp).
  std::vector<Mode> modes{Mode::fwd, Mode::bwd};
  int line = 0;
  // BackendBench-py's --check-backwards (plan/check_backwards.hpp): the loss is the sum of the
  // outputs (each grad_<output> is ones), the floating inputs of each case are differentiable
  // (the others not), and only correctness cases get a backward call (none is timed).
  bool loss_sum = false;
};

struct Manifest {
  std::filesystem::path path;  // the gen_input.yaml file
  std::string op;
  std::string description;
  uint64_t seed = 0;
  std::vector<std::string> devices{"cpu"};
  std::string baseline = "reference";                // one baseline, on the device it runs on
  std::vector<std::pair<std::string, std::string>> baselines;  // or one per device: {cuda: myop_cuda_naive}
  int baseline_line = 0;
  // `reference: FILE`: the library (its file name or stem) that serves as the reference, where
  // more than one exports <op>_reference; empty: the one library that does.
  std::string reference;
  int reference_line = 0;
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attributes;
  std::vector<OutputSpec> outputs;
  ToleranceTable tolerances;  // op-level overrides of the defaults
  std::optional<Sourced> flops;
  std::optional<Sourced> bytes;
  std::vector<CaseSpec> cases;  // correctness first, then performance, in file order
  std::vector<ImplDeclaration> implementations;
  std::optional<BackwardSpec> backward;

  int input_index(const std::string& name) const;
  std::filesystem::path dir() const { return path.parent_path(); }
  // "file:line" for messages.
  std::string where(int line) const;
};

// Parses and checks a manifest; `expected_op` (the folder name) must match `op:` if given.
Expected<Manifest> load_manifest(const std::filesystem::path& file, const std::string& expected_op);
// The same from the manifest's text; `file` is where it says it is (messages, relative paths).
Expected<Manifest> parse_manifest(const std::string& text, const std::filesystem::path& file, const std::string& expected_op);

}  // namespace bb
