#include "plan/backward_case.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "run/tolerance.hpp"

namespace bb {

namespace {
// The gradient of each output, as tritonbench draws its dy: 0.1 * randn.
constexpr double kGradOutputStd = 0.1;
}  // namespace

Expected<ConcreteCase> backward_case(const ConcreteCase& forward, const Manifest& m) {
  if (!m.backward) return make_error(fmt::format("{}: the op declares no backward", m.path.string()));
  const BackwardSpec& b = *m.backward;
  ConcreteCase c = forward;
  c.id = mode_case_id(Mode::bwd, forward.id);
  c.mode = Mode::bwd;
  // Inputs no forward call saw: a backward that reuses what its forward left behind (a kept
  // output, for one) is caught, not helped, by a forward run on the same values before it.
  c.seed = mix_seed(forward.seed, "bwd");
  c.outputs.clear();
  c.flops.reset();
  for (const auto& o : forward.outputs) {
    ConcreteTensor g;
    g.name = "grad_" + o.name;
    g.shape = o.shape;
    g.dtype = o.dtype;
    if (b.loss_sum) {  // d(sum of the outputs)/d(output): ones
      g.init.kind = InitKind::ones;
    } else {
      g.init.kind = InitKind::randn;
      g.init.a = 0.0;
      g.init.b = kGradOutputStd;
    }
    c.inputs.push_back(std::move(g));
  }
  for (const auto& name : b.differentiable) {
    const auto it = std::find_if(forward.inputs.begin(), forward.inputs.end(), [&](const ConcreteTensor& t) { return t.name == name; });
    if (it == forward.inputs.end()) return make_error(fmt::format("{}: backward: no input '{}' in case {}", m.where(b.line), name, forward.id));
    if (b.loss_sum && !is_floating(it->dtype)) continue;  // an integer input of this case has no gradient
    if (!is_floating(it->dtype))
      return make_error(fmt::format("{}: backward: input '{}' is {} in case {}: only a floating-point input has a gradient", m.where(b.line), name,
                                    dtype_name(it->dtype), forward.id));
    ConcreteOutput g;
    g.name = "grad_" + name;
    g.shape = it->shape;
    g.dtype = it->dtype;
    const auto own = b.tolerances.find(it->dtype);
    g.tolerance = own != b.tolerances.end() ? own->second : resolve_tolerance(it->dtype, m.tolerances, {});
    c.outputs.push_back(std::move(g));
  }
  // Its least traffic: every tensor it reads once and every gradient it writes once (the
  // forward's own figure says nothing of the backward's).
  double bytes = 0;
  for (const auto& t : c.inputs) bytes += static_cast<double>(t.nbytes());
  for (const auto& t : c.outputs) bytes += static_cast<double>(t.nbytes());
  c.bytes = bytes;
  return c;
}

ConcreteCase pair_case(const ConcreteCase& forward, const ConcreteCase& backward) {
  ConcreteCase c = backward;
  c.id = mode_case_id(Mode::fwd_bwd, forward.id);
  c.mode = Mode::fwd_bwd;
  c.seed = mix_seed(forward.seed, "fwd_bwd");
  c.outputs = forward.outputs;
  c.outputs.insert(c.outputs.end(), backward.outputs.begin(), backward.outputs.end());
  c.flops.reset();  // the backward's are not declared
  if (forward.bytes && backward.bytes) c.bytes = *forward.bytes + *backward.bytes;
  return c;
}

}  // namespace bb
