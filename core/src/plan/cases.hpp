// Expansion of a manifest's cases: each sweep point becomes one concrete case with every
// shape, dtype, attribute, tolerance and work figure resolved.
#pragma once

#include <algorithm>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/manifest.hpp"

namespace bb {

struct ConcreteTensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::float32;
  InitSpec init;
  uint32_t variants = 0;  // the value variants this input gets in this case (value_variants.hpp)
  int64_t numel() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
};

struct ConcreteOutput {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::float32;
  int inplace_input = -1;  // index of the aliased input, or -1
  Tolerance tolerance;
  int64_t numel() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
};

struct ConcreteCase {
  int index = 0;    // position in the op's expanded list (stable for a given manifest)
  std::string id;   // "correctness/small[dtype=float16,rows=7]"
  std::string name; // the case's name in the manifest ("small~tiny" for a value variant)
  std::string variant;  // the value variant this case is ("tiny"), "" for the manifest's own
  CaseKind kind = CaseKind::correctness;
  Mode mode = Mode::fwd;  // the pass it calls (mode.hpp): a bwd case is backward_case's
  std::vector<std::pair<std::string, Scalar>> params;
  std::vector<ConcreteTensor> inputs;
  std::vector<ConcreteOutput> outputs;
  std::vector<std::pair<std::string, AttrValue>> attrs;  // every declared attribute, in order
  std::optional<double> flops;
  std::optional<double> bytes;
  uint64_t seed = 0;
  std::vector<std::string> devices;  // the only devices whose implementations run it; empty: all

  bool runs_on(const std::string& device) const {
    return devices.empty() || std::find(devices.begin(), devices.end(), device) != devices.end();
  }
  std::vector<DType> dtypes() const;  // distinct dtypes of inputs and outputs
  // Its inputs' shapes and dtypes: "x: 4096x1024 float16, weight: 1024 float16" (a scalar: "[]").
  std::string shapes() const;
};

// What a run adds to the manifest's cases: --random-cases and --variants.
struct CaseExpansion {
  int random_cases = 0;
  uint32_t variants = 0;  // value_variants.hpp's VariantSet: the variants this run makes at most
  bool operator==(const CaseExpansion&) const = default;
};
// The run's default: no random cases, the default value variants.
CaseExpansion default_expansion();
// "random 2, variants default": part of a key of cases expanded alike.
std::string expansion_key(const CaseExpansion& e);

// Every case of the manifest, in order; then, with `random_cases` N > 0, N more for each sweep
// (a case with parameters): correctness cases named "<name>~random<k>" whose parameters are
// drawn by the manifest's seed (the run's --seed) from the sweep's range: integers and reals
// uniformly between the smallest and largest listed value, other values among those listed.
// A kernel tuned to the listed shapes only fails them. Then each correctness case's value
// variants (value_variants.hpp) that `variants` admits and some input of it gets: "<name>~tiny",
// the case's own draws (its seed) made extreme in the inputs that get the variant.
Expected<std::vector<ConcreteCase>> expand_cases(const Manifest& m, const CaseExpansion& expansion = {});

// Whether `c` meets `condition` (an expression of expr.hpp, true when nonzero) over its
// parameters and its tensors' shapes; an error names what could not be evaluated.
Expected<bool> meets(const ConcreteCase& c, std::string_view condition);

// Why `dtypes` (an info record's or a manifest's list, as plugin.h says) do not admit a tensor of
// `c`; "" when they admit every one (or are empty).
std::string dtype_mismatch(const ConcreteCase& c, const std::vector<std::string>& dtypes);

// Deterministic 64-bit mixing (FNV-1a of a string, folded with a seed through splitmix64).
uint64_t mix_seed(uint64_t seed, std::string_view salt);

}  // namespace bb
