// What a worker said of one device kind (describe_device_kind's reply, worker/device_probe.hpp), read once
// where the reply arrives: the worker slots, the skip reasons, each result's share of the peaks
// and the console read these fields, not the JSON. The reply itself is kept as it came for
// results.json ("devices"), the results stream and the peaks' cache (device_peak.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bb {

// A compute peak measured by one strategy ("fp16 tensor" by "wgmma": 743 TFLOP/s).
struct ComputePeak {
  std::string kind, strategy;
  double tflops = 0;
};

struct DeviceFacts {
  int ordinal = 0;
  std::string name = "?", arch = "?";
  std::string uuid;  // "GPU-..." (CUDA), the runtime's id elsewhere
  int multiprocessors = 0;
  double l2_bytes = 0, memory_bytes = 0;
  double peak_bandwidth_gbps = 0;  // theoretical: memory clock and bus width
  // The copy bandwidth measured (0: none), by which strategy, whether read from the cache;
  // where the measuring failed, why.
  double measured_gbps = 0;
  std::string measured_strategy = "copy kernel";
  bool measured_cached = false;
  bool measured_now = false;  // measured by this probe (not read from the cache)
  std::optional<std::string> measure_error;
  std::vector<ComputePeak> compute;  // in the order measured
  // The best strategy's figure for `kind`, 0 when not measured.
  double peak_tflops(const std::string& kind) const;
};

struct DeviceKind {
  std::string name;
  bool available = false;
  std::string reason;   // why it is not
  std::string runtime;  // "CUDA 12.4 (driver 550.54.15)"
  std::vector<DeviceFacts> devices;
  nlohmann::json reply;  // as the worker said it: results.json's "devices" and the results stream keep it
  const DeviceFacts* device(int ordinal) const;  // null: no such device
  std::vector<int> ordinals() const;
  bool measured_now() const;  // some device's peaks were measured by this probe
};

// Never throws: a field missing or of another type is its default (the reply is a worker's).
DeviceKind device_kind_from_json(const nlohmann::json& reply);

// The CPU, always there (its facts are the host's: host_info.hpp).
DeviceKind cpu_device_kind();

}  // namespace bb
