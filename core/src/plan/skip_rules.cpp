#include "plan/skip_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/device_runtimes.hpp"
#include "dtype.hpp"
#include "plugin_library.hpp"

namespace bb {

std::string unsupported_reason(const PluginInfo& info, const ConcreteCase& c) {
  if (auto why = dtype_mismatch(c, info.dtypes); !why.empty()) return why;
  for (const auto& p : info.preconditions) {
    auto ok = meets(c, p);  // evaluated on every case at planning: an error there made the library unusable
    if (!ok) return fmt::format("the implementation's precondition '{}' cannot be evaluated: {}", p, ok.error().message);
    if (!*ok) return fmt::format("the implementation's precondition '{}' does not hold", p);
  }
  return "";
}

SkipReason skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const DeviceKind* device_kind) {
  if (!impl.unavailable.empty()) return {impl.unavailable, false};
  if (impl.device.empty() || !device_kind)
    return {fmt::format("the implementation runs on {}; the op's tests run on {}", fmt::join(impl.info.devices, ", "), fmt::join(m.devices, ", ")),
            true};
  if (!is_cpu(impl.device) && !device_kind->available) return {device_kind->reason, false};
  // A forward alone, where the op declares a backward: its own choice, so its refusal (--strict
  // counts it a failure: an implementation whose backward is slow must not score better by
  // leaving it out).
  if (needs_backward(c.mode) && !impl.has_backward) return {fmt::format("it exports no {}_backward_impl: it has no backward pass", m.op), true};
  if (c.mode == Mode::fwd_bwd && is_python_implementation(impl.library))  // pass_pair.hpp: not this tool's reach yet, no refusal of its
    return {"fwd_bwd of a Python implementation is not supported yet: its fwd and bwd tests judge each pass", false};
  std::string why = unsupported_reason(impl.info, c);
  const bool refused = !why.empty();
  return {std::move(why), refused};
}

}  // namespace bb
