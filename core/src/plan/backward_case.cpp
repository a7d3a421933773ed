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
  c.id = "backward:" + forward.id;
  c.outputs.clear();
  c.flops.reset();
  c.bytes.reset();
  for (const auto& o : forward.outputs) {
    ConcreteTensor g;
    g.name = "grad_" + o.name;
    g.shape = o.shape;
    g.dtype = o.dtype;
    g.init.kind = InitKind::randn;
    g.init.a = 0.0;
    g.init.b = kGradOutputStd;
    c.inputs.push_back(std::move(g));
  }
  for (const auto& name : b.differentiable) {
    const auto it = std::find_if(forward.inputs.begin(), forward.inputs.end(), [&](const ConcreteTensor& t) { return t.name == name; });
    if (it == forward.inputs.end()) return make_error(fmt::format("{}: backward: no input '{}' in case {}", m.where(b.line), name, forward.id));
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
  return c;
}

}  // namespace bb
