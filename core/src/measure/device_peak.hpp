// A device's memory bandwidth as measured (bytes read plus written per second): the best of
// several strategies (bb_device_runtime::measure_bandwidth), taken once per device and cached
// on disk, so that "percent of peak" compares against what the device really reaches as well
// as against its theoretical figure. With it, the compute peaks (FP32, FP16/BF16 tensor:
// bb_device_runtime::measure_compute) that the roofline of a case with FLOPs uses.
//
// The cache: $BACKENDBENCH_CACHE_DIR, else $XDG_CACHE_HOME/backendbench, else
// ~/.cache/backendbench; file device_peaks.json, keyed by runtime, device UUID, name and
// runtime version. A cache that cannot be read or written only costs a new measurement. A run
// probes its devices in a worker behind walls, which cannot write there: the host reads the
// cache and hands it to the probe (`known`), and writes what the probe measured
// (remember_device_peaks). An entry whose bandwidth is not within [0.5, 1.05] of the device's
// theoretical figure is measured again: the measured peak is the physical floor a timing must
// not beat (docs/RELIABILITY.md), and a file outside the sandbox must not be able to lower it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "devices/device.hpp"

namespace bb {

std::filesystem::path device_cache_dir();

struct DevicePeak {
  double copy_gbps = 0;   // the best strategy's
  std::string strategy;   // which one that was
  std::vector<std::pair<std::string, double>> strategies;  // every one: (name, GB/s)
  struct Compute {
    std::string kind, strategy;
    double tflops = 0;
  };
  std::vector<Compute> compute;  // "fp32", "fp16 tensor", "bf16 tensor" where measured
  bool cached = false;    // read from the cache, not measured now
  std::string key;        // its entry's key in the cache
};

// Measures device `ordinal` (made current) unless `known` (the cache's entries, as
// read_device_peaks gives them) or the cache file has a usable entry for it; a measurement is
// written to the file where that can be done.
Expected<DevicePeak> device_peak_bandwidth(const DeviceRuntime& rt, int ordinal, const nlohmann::json& known = nlohmann::json::object());

// Whether a cached entry may serve a device whose theoretical bandwidth is `theoretical_gbps`
// (0: unknown, any positive figure serves).
bool usable_peak_entry(const nlohmann::json& entry, double theoretical_gbps);

// The cache file's entries (an empty object when there is none or it is damaged).
nlohmann::json read_device_peaks();

// Writes to the cache file the peaks a probe measured: `device_kind`, describe_device_kind's
// answer; entries read from the cache are left as they are.
void remember_device_peaks(const nlohmann::json& device_kind);

}  // namespace bb
