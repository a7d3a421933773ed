// A description of the machine a run happens on, for the results.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace bb {

nlohmann::json describe_host();

// This machine's physical memory in bytes (0: unknown).
std::size_t physical_memory_bytes();

}  // namespace bb
