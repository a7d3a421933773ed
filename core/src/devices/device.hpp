// Devices other than the CPU, reached through a runtime plugin (backendbench_cuda.so,
// backendbench_hip.so) loaded on first use. Only workers load them: the host process never
// initialises a GPU context.
#pragma once

#include <string>
#include <vector>

#include <backendbench/device_runtime.h>
#include <nlohmann/json.hpp>

#include "expected.hpp"

namespace bb {

class DeviceRuntime {
 public:
  // The runtime named "cuda" or "hip", loaded and with at least one device; otherwise why not
  // (no plugin built, the driver is missing, no device). Cached for the process.
  static Expected<DeviceRuntime*> get(const std::string& name);

  const bb_device_runtime& api() const { return *api_; }
  const std::vector<bb_device_properties>& devices() const { return devices_; }
  int dlpack_device_type() const { return api_->dlpack_device_type; }
  // "cudaErrorIllegalAddress (an illegal memory access was encountered)"-like text.
  std::string describe(int code) const;
  bool sticky(int code) const { return api_->is_sticky(code) != 0; }

 private:
  const bb_device_runtime* api_ = nullptr;
  std::vector<bb_device_properties> devices_;
};

// Where runtime plugins are looked for: $BACKENDBENCH_PLUGIN_DIR, <binary dir>/plugins,
// <binary dir>/../lib/backendbench/plugins.
std::vector<std::string> runtime_plugin_dirs();

}  // namespace bb
