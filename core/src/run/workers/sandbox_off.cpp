#include "run/workers/sandbox_off.hpp"

#include <cstdlib>
#include <string>

namespace bb {

bool sandbox_part_off(std::string_view part) {
  const char* env = std::getenv("BACKENDBENCH_SANDBOX_OFF");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + std::string(part) + ",") != std::string::npos;
}

}  // namespace bb
