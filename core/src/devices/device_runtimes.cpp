#include "devices/device_runtimes.hpp"

namespace bb {

namespace {
constexpr RuntimeRow kDeviceRuntimes[] = {
    {"cuda", "/dev/nvidiactl", "CUDA_VISIBLE_DEVICES", "nvidia", "GPU-", "MIG"},
    {"hip", "/dev/kfd", nullptr, nullptr, nullptr, nullptr},
};
}  // namespace

std::span<const RuntimeRow> runtime_rows() { return kDeviceRuntimes; }

const RuntimeRow* find_runtime_row(std::string_view name) {
  for (const auto& rt : kDeviceRuntimes)
    if (name == rt.name) return &rt;
  return nullptr;
}

SlotDevice slot_device(const std::vector<std::string>& kinds, int ordinal) {
  for (const auto& k : kinds)
    if (const RuntimeRow* rt = find_runtime_row(k); rt && rt->narrow_uuid_prefix && rt->visible_env) return {rt, ordinal};
  return {};
}

std::vector<std::string> device_kind_names() {
  std::vector<std::string> names{std::string(kCpuDevice)};
  for (const auto& rt : kDeviceRuntimes) names.emplace_back(rt.name);
  return names;
}

std::string device_kind_choices() {
  const auto names = device_kind_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

bool is_device_kind(std::string_view name) { return is_cpu(name) || find_runtime_row(name) != nullptr; }

std::string runtime_plugin_file(std::string_view name, std::string_view suffix) {
  return "backendbench_" + std::string(name) + std::string(suffix);
}

}  // namespace bb
