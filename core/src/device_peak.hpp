// A device's memory bandwidth as measured (bytes read plus written per second): the best of
// several strategies (bb_device_runtime::measure_bandwidth), taken once per device and cached
// on disk, so that "percent of peak" compares against what the device really reaches as well
// as against its theoretical figure. With it, the compute peaks (FP32, FP16/BF16 tensor:
// bb_device_runtime::measure_compute) that the roofline of a case with FLOPs uses.
//
// The cache: $BACKENDBENCH_CACHE_DIR, else $XDG_CACHE_HOME/backendbench, else
// ~/.cache/backendbench; file device_peaks.json, keyed by runtime, device UUID, name and
// runtime version. A cache that cannot be read or written only costs a new measurement.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device.hpp"

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
};

// Measures device `ordinal` (made current) unless the cache has it.
Expected<DevicePeak> device_peak_bandwidth(const DeviceRuntime& rt, int ordinal);

}  // namespace bb
