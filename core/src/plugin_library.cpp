#include "plugin_library.hpp"

#include <fmt/format.h>

namespace bb {

Expected<PluginLibrary> load_plugin(const std::filesystem::path& path, const std::string& op) {
  auto lib = DynamicLibrary::open(path);
  if (!lib) return lib.error();
  PluginLibrary p{std::move(*lib), nullptr, nullptr, {}};
  const std::string impl_name = op + "_kernel_impl";
  const std::string ref_name = op + "_reference";
  p.kernel_impl = reinterpret_cast<bb_kernel_fn>(p.library.symbol(impl_name.c_str()));
  p.reference = reinterpret_cast<bb_kernel_fn>(p.library.symbol(ref_name.c_str()));
  if (!p.kernel_impl && !p.reference)
    return make_error(fmt::format("{}: missing symbol: exports neither {} nor {}", path.string(), impl_name, ref_name));

  if (auto fn = reinterpret_cast<bb_plugin_info_fn>(p.library.symbol(BB_PLUGIN_INFO_SYMBOL))) {
    const bb_plugin_info* info = fn();
    if (!info) return make_error(fmt::format("{}: {}() returned NULL", path.string(), BB_PLUGIN_INFO_SYMBOL));
    if (info->struct_size < offsetof(bb_plugin_info, abi_version) + sizeof(uint32_t))
      return make_error(fmt::format("{}: {}: struct_size {} is too small to be an info record", path.string(),
                                    BB_PLUGIN_INFO_SYMBOL, info->struct_size));
    p.info.present = true;
    p.info.abi_version = info->abi_version;
    if (BB_ABI_MAJOR_OF(info->abi_version) != BB_ABI_VERSION_MAJOR)
      return make_error(fmt::format("{}: ABI version {}.{} is not one this host speaks (expected {}.x)", path.string(),
                                    BB_ABI_MAJOR_OF(info->abi_version), info->abi_version & 0xffffu, BB_ABI_VERSION_MAJOR));
    auto strings = [&](int32_t n, const char* const* v, size_t end_of_field, std::vector<std::string>& out) -> Status {
      if (info->struct_size < end_of_field || n <= 0) return Ok{};
      if (!v || n > 64) return make_error(fmt::format("{}: info record lists {} entries but no array", path.string(), n));
      for (int32_t i = 0; i < n; ++i)
        if (v[i]) out.emplace_back(v[i]);
      return Ok{};
    };
    if (info->struct_size >= offsetof(bb_plugin_info, version) + sizeof(const char*) && info->version) p.info.version = info->version;
    if (auto s = strings(info->num_devices, info->devices, offsetof(bb_plugin_info, devices) + sizeof(void*), p.info.devices); !s)
      return s.error();
    if (auto s = strings(info->num_dtypes, info->dtypes, offsetof(bb_plugin_info, dtypes) + sizeof(void*), p.info.dtypes); !s)
      return s.error();
  }
  return p;
}

}  // namespace bb
