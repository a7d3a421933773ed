// Why a test is SKIPPED rather than run: the implementation's own refusal (the devices, dtypes
// or preconditions it declares) or the machine's lack (no such device here, a runtime that is
// not available, a Python implementation this machine cannot import). Asked by the session for
// every test of the sweep before any job, by --list and by check.
#pragma once

#include <string>

#include "devices/device_kind.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "plan/plan.hpp"
#include "plugin_library.hpp"

namespace bb {

// Why an implementation does not support a case by what it declares (its dtypes, its
// preconditions), or "" if it does.
std::string unsupported_reason(const PluginInfo& info, const ConcreteCase& c);

// Why an implementation cannot run a case on `device` ("" if it can), and whether that is its
// own refusal (the devices, dtypes or preconditions it declares: Outcome::refused) rather than
// the machine's lack.
struct SkipReason {
  std::string why;
  bool refused = false;
};
// `device_kind`: the description of impl.device (null when it runs on none of the op's devices).
SkipReason skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const DeviceKind* device_kind);

}  // namespace bb
