// libFuzzer target over what a manifest author controls: the manifest parser (and the case
// expansion it feeds, expressions included), the expression evaluator alone, and the .npy
// reader. The first byte picks the target (0: manifest, 1: expression, 2: .npy), the rest is
// its input. Any crash, sanitizer report or escaped exception is a finding: each parser must
// answer bad input with an error value.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "npy.hpp"
#include "plan/cases.hpp"
#include "plan/expr.hpp"
#include "plan/manifest.hpp"
#include "plan/value_variants.hpp"

namespace {

class FixedEnv final : public bb::ExprEnv {
 public:
  std::optional<double> variable(std::string_view name) const override {
    if (name == "n") return 64;
    if (name == "rows") return 7;
    if (name == "x.0") return 3;
    if (name == "x.-1") return 5;
    return std::nullopt;
  }
  std::optional<double> tensor_function(std::string_view fn, std::string_view arg) const override {
    if (arg != "x" && arg != "float32") return std::nullopt;
    return fn == "numel" ? 15.0 : 4.0;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: {
      auto m = bb::parse_manifest(text, "/fuzz/op/gen_input.yaml", "");
      if (m) {
        // Only small sweeps: the expansion is checked, not the machine's memory.
        std::size_t points = 1;
        for (const auto& c : m->cases)
          for (const auto& [name, values] : c.params) points *= std::max<std::size_t>(1, values.size());
        if (points <= 4096) (void)bb::expand_cases(*m, bb::CaseExpansion{2, bb::kAllVariants});
      }
      break;
    }
    case 1: {
      FixedEnv env;
      (void)bb::evaluate(text, env);
      (void)bb::evaluate_dimension(text, env);
      break;
    }
    case 2: {
      std::istringstream in(text);
      (void)bb::read_npy(in, "fuzz.npy");
      break;
    }
  }
  return 0;
}
