#include "worker/device_probe.hpp"

#include "devices/device.hpp"
#include "measure/device_peak.hpp"

namespace bb {

nlohmann::json describe_device_kind(const std::string& name, bool measure_peak, const nlohmann::json& known_peaks) {
  auto rt = DeviceRuntime::get(name);
  if (!rt) return {{"name", name}, {"available", false}, {"reason", rt.error().message}};
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& p : (*rt)->devices()) {
    nlohmann::json measured, compute = nlohmann::json::array();
    if (measure_peak) {
      auto peak = device_peak_bandwidth(**rt, p.ordinal, known_peaks);
      nlohmann::json strategies = nlohmann::json::array();
      if (peak)
        for (const auto& [name, gbps] : peak->strategies) strategies.push_back({{"strategy", name}, {"gbps", gbps}});
      measured = peak ? nlohmann::json{{"copy_gbps", peak->copy_gbps}, {"strategy", peak->strategy}, {"strategies", strategies},
                                       {"cached", peak->cached}, {"key", peak->key}}
                      : nlohmann::json{{"error", peak.error().message}};
      if (peak)
        for (const auto& c : peak->compute) compute.push_back({{"kind", c.kind}, {"strategy", c.strategy}, {"tflops", c.tflops}});
    }
    devices.push_back({{"ordinal", p.ordinal},
                       {"name", p.name},
                       {"arch", p.arch},
                       {"multiprocessors", p.multiprocessors},
                       {"l2_bytes", p.l2_bytes},
                       {"memory_bytes", p.memory_bytes},
                       {"sm_clock_khz", p.sm_clock_khz},
                       {"memory_clock_khz", p.memory_clock_khz},
                       {"memory_bus_bits", p.memory_bus_bits},
                       {"uuid", p.uuid},
                       {"peak_bandwidth_gbps", p.peak_bandwidth_gbps},
                       {"measured_bandwidth", measured},
                       {"measured_compute", compute}});
  }
  return {{"name", name},
          {"available", true},
          {"runtime", (*rt)->api().runtime_version ? (*rt)->api().runtime_version : ""},
          {"devices", devices}};
}

}  // namespace bb
