// The kinds of device a test runs on, as a table: the host's CPU, and one row per device runtime
// (kDeviceRuntimes, device_runtimes.cpp). A new runtime is a row there and its runtime plugin
// (plugins/<name>/, built as backendbench_<name>.so: device.hpp loads it by that name); the
// manifest's and the plugins' device names, --devices, new-op, resource-spec and the worker supply
// read the table. "cpu" is named once, here: is_cpu() is how the host asks.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bb {

struct RuntimeRow {
  const char* name;         // "cuda": the manifests' and the CLI's word for it
  const char* driver_node;  // a file that exists where its driver is installed ("/dev/nvidiactl")
  // Where its GPUs can be counted without loading it (a cheap hint for the worker supply):
  // the variable that narrows them and the /dev name prefix of one node per GPU; null: no hint.
  const char* visible_env;
  const char* gpu_node_prefix;
  // Where a worker of one device's slot is narrowed to that device alone (visible_env set to its
  // UUID: four GPUs' workers make their own contexts at once, none on another's): the prefix a
  // UUID it accepts starts with ("GPU-"), and the word that marks a partition of a device named
  // otherwise there ("MIG"), left as it is. Null: the runtime's workers see every device.
  const char* narrow_uuid_prefix;
  const char* partition_word;
};

// A slot's one device, where its runtime narrows workers to it (RuntimeRow::narrow_uuid_prefix):
// a worker of the slot is told that device alone. No runtime: none (a CPU slot; a runtime that
// does not narrow).
struct SlotDevice {
  const RuntimeRow* runtime = nullptr;
  int ordinal = -1;
  explicit operator bool() const { return runtime != nullptr && ordinal >= 0; }
};
// The device of a slot that runs `kinds` on `ordinal`: the first kind whose runtime narrows.
SlotDevice slot_device(const std::vector<std::string>& kinds, int ordinal);

inline constexpr std::string_view kCpuDevice = "cpu";
inline bool is_cpu(std::string_view device) { return device == kCpuDevice; }

std::span<const RuntimeRow> runtime_rows();
const RuntimeRow* find_runtime_row(std::string_view name);  // null: no such runtime

// "cpu" and every runtime's name, in the table's order; as prose, "cpu, cuda or hip".
std::vector<std::string> device_kind_names();
std::string device_kind_choices();
bool is_device_kind(std::string_view name);

// The runtime plugin's file name: backendbench_<name>.so (or the platform's suffix).
std::string runtime_plugin_file(std::string_view name, std::string_view suffix = ".so");

}  // namespace bb
