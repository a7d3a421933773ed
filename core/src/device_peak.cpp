#include "device_peak.hpp"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace bb {

std::filesystem::path device_cache_dir() {
  if (const char* d = std::getenv("BACKENDBENCH_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::filesystem::path(d) / "backendbench";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "backendbench";
  return std::filesystem::temp_directory_path() / "backendbench";
}

namespace {
nlohmann::json read_cache(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  try {
    auto j = nlohmann::json::parse(in);
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const std::exception&) {
    return nlohmann::json::object();  // a damaged cache is measured again and rewritten
  }
}

void write_cache(const std::filesystem::path& file, const nlohmann::json& j) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const auto tmp = file.parent_path() / fmt::format(".{}.{}", file.filename().string(), ::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << j.dump(2) << "\n";
    if (!out) return;
  }
  std::filesystem::rename(tmp, file, ec);  // atomic: concurrent workers never read half a file
  if (ec) std::filesystem::remove(tmp, ec);
}
}  // namespace

Expected<DevicePeak> device_peak_bandwidth(const DeviceRuntime& rt, int ordinal) {
  const auto& p = rt.devices().at(static_cast<size_t>(ordinal));
  const std::string key = fmt::format("{}|{}|{}|{}", rt.api().name, p.uuid, p.name, rt.api().runtime_version ? rt.api().runtime_version : "");
  const auto file = device_cache_dir() / "device_peaks.json";
  nlohmann::json cache = read_cache(file);
  if (auto it = cache.find(key); it != cache.end() && it->is_object() && it->value("copy_gbps", 0.0) > 0)
    return DevicePeak{it->value("copy_gbps", 0.0), true};

  if (int e = rt.api().set_device(ordinal); e != 0) return make_error(fmt::format("set device {}: {}", ordinal, rt.describe(e)));
  double gbps = 0;
  if (int e = rt.api().measure_copy_bandwidth(&gbps); e != 0) return make_error("copy bandwidth: " + rt.describe(e));
  if (gbps <= 0) return make_error("copy bandwidth: the copy kernel reported no time");
  cache = read_cache(file);  // another worker may have written meanwhile
  cache[key] = {{"copy_gbps", gbps}, {"theoretical_gbps", p.peak_bandwidth_gbps}, {"device", p.name}};
  write_cache(file, cache);
  return DevicePeak{gbps, false};
}

}  // namespace bb
