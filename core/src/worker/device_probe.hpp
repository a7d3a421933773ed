// A worker's answer to the host's probe of a device kind (the "describe" request): the runtime's
// devices and their facts, which device_kind.hpp reads on the host.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace bb {

// What the worker reports about a device kind, for the host's SKIPPED reasons and results;
// with measure_peak, each device's copy bandwidth too (measure/device_peak.hpp), unless
// `known_peaks` (the host's cache of them) has it.
nlohmann::json describe_device_kind(const std::string& name, bool measure_peak = false,
                                    const nlohmann::json& known_peaks = nlohmann::json::object());

}  // namespace bb
