#include "measure/device_peak.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

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
  // Workers in PID namespaces of their own share pid numbers: a random part keeps names apart.
  const auto tmp = file.parent_path() / fmt::format(".{}.{}.{:x}", file.filename().string(), ::getpid(), std::random_device{}());
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

namespace {
nlohmann::json peak_json(const DevicePeak& p) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& [name, gbps] : p.strategies) all.push_back({{"strategy", name}, {"gbps", gbps}});
  nlohmann::json compute = nlohmann::json::array();
  for (const auto& c : p.compute) compute.push_back({{"kind", c.kind}, {"strategy", c.strategy}, {"tflops", c.tflops}});
  return {{"copy_gbps", p.copy_gbps}, {"strategy", p.strategy}, {"strategies", all}, {"compute", compute}};
}
// A cache entry: the peaks, and what they were measured on.
nlohmann::json cache_entry(const DevicePeak& p, double theoretical_gbps, const std::string& device) {
  nlohmann::json entry = peak_json(p);
  entry["theoretical_gbps"] = theoretical_gbps;
  entry["device"] = device;
  return entry;
}
}  // namespace

bool usable_peak_entry(const nlohmann::json& entry, double theoretical_gbps) {
  if (!entry.is_object()) return false;
  const auto gbps = entry.find("copy_gbps");
  if (gbps == entry.end() || !gbps->is_number()) return false;
  const double v = gbps->get<double>();
  if (!(v > 0)) return false;
  return theoretical_gbps <= 0 || (v >= 0.5 * theoretical_gbps && v <= 1.05 * theoretical_gbps);
}

nlohmann::json read_device_peaks() { return read_cache(device_cache_dir() / "device_peaks.json"); }

namespace {
// An entry as a DevicePeak; nullopt when a field has another type than expected.
std::optional<DevicePeak> peak_from_entry(const nlohmann::json& e, const std::string& key) try {
  DevicePeak out{e.value("copy_gbps", 0.0), e.value("strategy", ""), {}, {}, true, key};
  if (auto all = e.find("strategies"); all != e.end() && all->is_array())
    for (const auto& f : *all)
      if (f.is_object()) out.strategies.emplace_back(f.value("strategy", ""), f.value("gbps", 0.0));
  if (auto all = e.find("compute"); all != e.end() && all->is_array())
    for (const auto& f : *all)
      if (f.is_object()) out.compute.push_back({f.value("kind", ""), f.value("strategy", ""), f.value("tflops", 0.0)});
  return out;
} catch (const nlohmann::json::exception&) {
  return std::nullopt;
}
}  // namespace

void remember_device_peaks(const nlohmann::json& device_kind) {
  if (!device_kind.is_object()) return;
  const auto devices = device_kind.find("devices");
  if (devices == device_kind.end() || !devices->is_array()) return;
  const auto file = device_cache_dir() / "device_peaks.json";
  nlohmann::json cache = read_cache(file);
  bool changed = false;
  for (const auto& d : *devices) try {
    if (!d.is_object()) continue;
    const auto found = d.find("measured_bandwidth");
    if (found == d.end() || !found->is_object()) continue;  // not measured (a run that times nothing)
    const nlohmann::json& m = *found;
    const std::string key = m.value("key", "");
    if (key.empty() || m.value("cached", true) || !usable_peak_entry(m, d.value("peak_bandwidth_gbps", 0.0))) continue;
    nlohmann::json measured = m;  // the probe's answer carries the compute peaks beside the bandwidth
    measured["compute"] = d.value("measured_compute", nlohmann::json::array());
    const auto peak = peak_from_entry(measured, key);
    if (!peak) continue;
    cache[key] = cache_entry(*peak, d.value("peak_bandwidth_gbps", 0.0), d.value("name", ""));
    changed = true;
  } catch (const nlohmann::json::exception&) {
    // a field of another type than expected: that device's peak is not kept
  }
  if (changed) write_cache(file, cache);
}

Expected<DevicePeak> device_peak_bandwidth(const DeviceRuntime& rt, int ordinal, const nlohmann::json& known) {
  const auto& p = rt.devices().at(static_cast<size_t>(ordinal));
  // "v5": the best of several strategies, and the compute peaks with cuBLAS on random operands (older entries lack them).
  const std::string key =
      fmt::format("v5|{}|{}|{}|{}", rt.api().name, p.uuid, p.name, rt.api().runtime_version ? rt.api().runtime_version : "");
  const auto file = device_cache_dir() / "device_peaks.json";
  for (const nlohmann::json& source : {known, read_cache(file)})
    if (source.is_object())
      if (auto it = source.find(key); it != source.end() && usable_peak_entry(*it, p.peak_bandwidth_gbps))
        if (auto peak = peak_from_entry(*it, key)) return *peak;

  if (int e = rt.api().set_device(ordinal); e != 0) return make_error(fmt::format("set device {}: {}", ordinal, rt.describe(e)));
  bb_bandwidth_figure figures[16] = {};
  int count = 0;
  if (int e = rt.api().measure_bandwidth(figures, 16, &count); e != 0) return make_error("memory bandwidth: " + rt.describe(e));
  DevicePeak out;
  out.key = key;
  for (int i = 0; i < count && i < 16; ++i) {
    figures[i].strategy[sizeof figures[i].strategy - 1] = '\0';
    out.strategies.emplace_back(figures[i].strategy, figures[i].gbps);
    if (figures[i].gbps > out.copy_gbps) {
      out.copy_gbps = figures[i].gbps;
      out.strategy = figures[i].strategy;
    }
  }
  if (out.copy_gbps <= 0) return make_error("memory bandwidth: no strategy reported a time");
  bb_compute_figure compute[8] = {};
  count = 0;
  if (int e = rt.api().measure_compute(compute, 8, &count); e != 0) return make_error("compute throughput: " + rt.describe(e));
  for (int i = 0; i < count && i < 8; ++i) {
    compute[i].kind[sizeof compute[i].kind - 1] = '\0';
    compute[i].strategy[sizeof compute[i].strategy - 1] = '\0';
    if (compute[i].tflops > 0) out.compute.push_back({compute[i].kind, compute[i].strategy, compute[i].tflops});
  }
  nlohmann::json cache = read_cache(file);  // another process may have written meanwhile
  cache[key] = cache_entry(out, p.peak_bandwidth_gbps, p.name);
  write_cache(file, cache);
  return out;
}

}  // namespace bb
