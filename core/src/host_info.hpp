// A description of the machine a run happens on, for the results.
#pragma once

#include <nlohmann/json.hpp>

namespace bb {

nlohmann::json describe_host();

// The host's memory bandwidth as every usable core copies (bytes read and written per second,
// the best of a few copies of 64 MiB): the physical floor of a cold CPU call. About 0.1 s.
double measure_cpu_copy_bandwidth();

}  // namespace bb
