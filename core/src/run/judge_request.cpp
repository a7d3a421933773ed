#include "run/judge_request.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace bb {

std::size_t default_device_check_min_bytes() {
  const char* v = std::getenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES");
  if (!v || !*v) return DriverLimits{}.device_check_min_bytes;
  if (std::strcmp(v, "off") == 0) return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

}  // namespace bb
