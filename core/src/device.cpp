#include "device.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "device_runtimes.hpp"
#include "measure/device_peak.hpp"
#include "dynamic_library.hpp"

namespace bb {

std::vector<std::string> runtime_plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("BACKENDBENCH_PLUGIN_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back((exe.parent_path() / "plugins").string());
    dirs.push_back((exe.parent_path().parent_path() / "lib" / "backendbench" / "plugins").string());
  }
  return dirs;
}

std::string DeviceRuntime::describe(int code) const {
  const char* s = api_->error_string ? api_->error_string(code) : nullptr;
  return fmt::format("{} error {} ({})", api_->name, code, s ? s : "unknown");
}

Expected<DeviceRuntime*> DeviceRuntime::get(const std::string& name) {
  static std::map<std::string, Expected<std::unique_ptr<DeviceRuntime>>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    auto load = [&]() -> Expected<std::unique_ptr<DeviceRuntime>> {
      const std::string file = runtime_plugin_file(name, DynamicLibrary::suffix());
      std::filesystem::path found;
      for (const auto& d : runtime_plugin_dirs())
        if (std::filesystem::exists(std::filesystem::path(d) / file)) {
          found = std::filesystem::path(d) / file;
          break;
        }
      if (found.empty())
        return make_error(fmt::format("no {} runtime plugin ({} not found in {})", name, file, fmt::join(runtime_plugin_dirs(), ", ")));
      auto lib = DynamicLibrary::open(found);
      if (!lib) return make_error(fmt::format("the {} runtime cannot be loaded: {}", name, lib.error().message));
      auto fn = reinterpret_cast<bb_device_runtime_fn>(lib->symbol(BB_DEVICE_RUNTIME_SYMBOL));
      if (!fn) return make_error(fmt::format("{}: missing symbol {}", found.string(), BB_DEVICE_RUNTIME_SYMBOL));
      auto rt = std::make_unique<DeviceRuntime>();
      rt->api_ = fn();
      if (!rt->api_ || rt->api_->version != BB_DEVICE_RUNTIME_VERSION || rt->api_->struct_size < sizeof(bb_device_runtime))
        return make_error(fmt::format("{}: device runtime version {} is not {}", found.string(), rt->api_ ? rt->api_->version : 0,
                                      BB_DEVICE_RUNTIME_VERSION));
      int count = 0;
      if (int e = rt->api_->device_count(&count); e != 0)
        return make_error(fmt::format("no {} device: {}", name, rt->describe(e)));
      if (count <= 0) return make_error(fmt::format("no {} device on this machine", name));
      for (int i = 0; i < count; ++i) {
        bb_device_properties p{};
        p.struct_size = sizeof p;
        if (int e = rt->api_->get_properties(i, &p); e != 0)
          return make_error(fmt::format("{} device {}: {}", name, i, rt->describe(e)));
        rt->devices_.push_back(p);
      }
      return rt;
    };
    it = cache.emplace(name, load()).first;
  }
  if (!it->second) return it->second.error();
  return it->second.value().get();
}

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
