#include "plan/check_backwards.hpp"

namespace bb {

namespace {
// BackendBench-py's tolerance for gradients, absolute and relative.
constexpr double kGradientTolerance = 1e-2;
}  // namespace

BackwardSpec check_backwards_spec(const Manifest& m) {
  BackwardSpec b;
  for (const auto& input : m.inputs) b.differentiable.push_back(input.name);
  for (DType t : all_dtypes())
    if (is_floating(t)) b.tolerances[t] = Tolerance{kGradientTolerance, kGradientTolerance, false};
  b.modes = {Mode::fwd, Mode::bwd};
  b.loss_sum = true;
  return b;
}

}  // namespace bb
