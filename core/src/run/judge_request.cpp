#include "run/judge_request.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace bb {

TestId case_identity(const std::string& op, const ConcreteCase& c) {
  TestId id;
  id.op = op;
  id.case_id = c.id;
  id.variant = c.variant;
  id.kind = case_kind_name(c.kind);
  id.mode = mode_name(c.mode);
  id.flops = c.flops;
  id.bytes = c.bytes;
  id.shapes = c.shapes();
  return id;
}

TestRequest case_request(const std::string& op, const ConcreteCase& c, std::filesystem::path data_dir) {
  TestRequest req;
  req.id = case_identity(op, c);
  req.op = op;
  req.test_case = c;
  req.data_dir = std::move(data_dir);
  return req;
}

std::size_t default_device_check_min_bytes() {
  const char* v = std::getenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES");
  if (!v || !*v) return DriverLimits{}.device_check_min_bytes;
  if (std::strcmp(v, "off") == 0) return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

}  // namespace bb
