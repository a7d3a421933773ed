// A description of the machine a run happens on, for the results.
#pragma once

#include <nlohmann/json.hpp>

namespace bb {

nlohmann::json describe_host();

}  // namespace bb
