#include "devices/device.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
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

}  // namespace bb
