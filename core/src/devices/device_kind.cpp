#include "devices/device_kind.hpp"

#include <algorithm>

#include "devices/device_runtimes.hpp"

namespace bb {

namespace {

// `j[key]` when it holds a T, else `fallback`.
template <class T>
T field(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : fallback;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return it->is_number() ? it->get<T>() : fallback;
  } else {
    return it->is_string() ? it->get<std::string>() : fallback;
  }
}

DeviceFacts device_facts(const nlohmann::json& d) {
  DeviceFacts f;
  f.ordinal = field(d, "ordinal", 0);
  f.name = field(d, "name", std::string("?"));
  f.arch = field(d, "arch", std::string("?"));
  f.uuid = field(d, "uuid", std::string());
  f.multiprocessors = field(d, "multiprocessors", 0);
  f.l2_bytes = field(d, "l2_bytes", 0.0);
  f.memory_bytes = field(d, "memory_bytes", 0.0);
  f.peak_bandwidth_gbps = field(d, "peak_bandwidth_gbps", 0.0);
  if (const auto mb = d.find("measured_bandwidth"); mb != d.end() && mb->is_object()) {
    f.measured_gbps = field(*mb, "copy_gbps", 0.0);
    f.measured_strategy = field(*mb, "strategy", std::string("copy kernel"));
    f.measured_cached = field(*mb, "cached", false);
    f.measured_now = mb->contains("copy_gbps") && !field(*mb, "cached", true);
    if (mb->contains("error")) f.measure_error = field(*mb, "error", std::string());
  }
  if (const auto mc = d.find("measured_compute"); mc != d.end() && mc->is_array())
    for (const auto& c : *mc)
      if (c.is_object()) f.compute.push_back({field(c, "kind", std::string()), field(c, "strategy", std::string()), field(c, "tflops", 0.0)});
  return f;
}

}  // namespace

double DeviceFacts::peak_tflops(const std::string& kind) const {
  double best = 0;  // several strategies may measure one kind: the best is its peak
  for (const auto& c : compute)
    if (c.kind == kind) best = std::max(best, c.tflops);
  return best;
}

const DeviceFacts* DeviceKind::device(int ordinal) const {
  const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceFacts& d) { return d.ordinal == ordinal; });
  return it == devices.end() ? nullptr : &*it;
}

std::vector<int> DeviceKind::ordinals() const {
  std::vector<int> out;
  for (const auto& d : devices) out.push_back(d.ordinal);
  return out;
}

bool DeviceKind::measured_now() const {
  return std::any_of(devices.begin(), devices.end(), [](const DeviceFacts& d) { return d.measured_now; });
}

DeviceKind device_kind_from_json(const nlohmann::json& reply) {
  DeviceKind k;
  k.reply = reply;
  k.name = field(reply, "name", std::string("?"));
  k.available = field(reply, "available", false);
  k.reason = field(reply, "reason", std::string(k.available ? "" : "device unavailable"));
  k.runtime = field(reply, "runtime", std::string());
  if (reply.is_object())
    if (const auto ds = reply.find("devices"); ds != reply.end() && ds->is_array())
      for (const auto& d : *ds)
        if (d.is_object()) k.devices.push_back(device_facts(d));
  return k;
}

DeviceKind cpu_device_kind() {
  DeviceKind k;
  k.name = kCpuDevice;
  k.available = true;
  k.reply = {{"name", kCpuDevice}, {"available", true}};
  return k;
}

}  // namespace bb
