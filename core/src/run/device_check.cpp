#include "run/device_check.hpp"

#include <fmt/format.h>

#include "host_buffer.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/allclose.hpp"

namespace bb {

nlohmann::json to_json(const std::vector<DeviceCheckItem>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& i : items)
    a.push_back({{"mirror", i.mirror}, {"offset", i.offset}, {"bytes", i.bytes}, {"expected_offset", i.expected_offset},
                 {"close", i.close}, {"code", i.code}, {"bits", i.bits}, {"n", i.n}, {"atol", i.atol}, {"rtol", i.rtol}, {"scale_atol", i.scale_atol}, {"output", i.output}});
  return a;
}

std::vector<DeviceCheckItem> device_check_items_from_json(const nlohmann::json& j) {
  std::vector<DeviceCheckItem> items;
  if (!j.is_array()) return items;
  for (const auto& e : j) {
    if (!e.is_object()) continue;
    DeviceCheckItem i;
    i.mirror = e.value("mirror", -1);
    i.offset = e.value("offset", std::size_t{0});
    i.bytes = e.value("bytes", std::size_t{0});
    i.expected_offset = e.value("expected_offset", std::size_t{0});
    i.close = e.value("close", false);
    i.code = e.value("code", uint8_t{0});
    i.bits = e.value("bits", uint8_t{0});
    i.n = e.value("n", std::size_t{0});
    i.atol = e.value("atol", 0.0);
    i.rtol = e.value("rtol", 0.0);
    i.scale_atol = e.value("scale_atol", false);
    i.output = e.value("output", "");
    items.push_back(i);
  }
  return items;
}

int mirror_count(const ConcreteCase& c) {
  int k = static_cast<int>(c.inputs.size());
  for (const auto& o : c.outputs) k += o.inplace_input >= 0 ? 0 : 1;
  return k;
}

std::optional<std::vector<DeviceCheckItem>> device_checks(const ConcreteCase& c) {
  constexpr std::size_t g = HostBuffer::kGuardBytes;
  const BlobLayout l = buffers_layout(c);
  std::vector<DeviceCheckItem> items;
  auto same = [&](int mirror, std::size_t offset, std::size_t bytes, std::size_t expected) {
    items.push_back(DeviceCheckItem{mirror, offset, bytes, expected, false, 0, 0, 0, 0, 0, false, ""});
  };
  // A tensor's data within tolerance, its guards byte for byte.
  auto close = [&](int mirror, std::size_t region, const ConcreteOutput& o) -> bool {
    if (!is_floating(o.dtype)) return false;
    const DLDataType dl = to_dlpack(o.dtype);
    same(mirror, 0, g, l.offsets[region]);
    same(mirror, g + o.nbytes(), g, l.offsets[region] + g + o.nbytes());
    items.push_back(DeviceCheckItem{mirror, g, o.nbytes(), l.offsets[region] + g, true, dl.code, dl.bits, static_cast<std::size_t>(o.numel()),
                                    o.tolerance.atol, o.tolerance.rtol, o.tolerance.scale_atol, o.name});
    return true;
  };
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const ConcreteOutput* target = nullptr;  // the in-place output that lands here
    for (const auto& o : c.outputs)
      if (o.inplace_input == static_cast<int>(i)) target = &o;
    if (!target) {
      same(static_cast<int>(i), 0, l.sizes[i], l.offsets[i]);  // unchanged, guards and all
    } else if (!close(static_cast<int>(i), i, *target)) {
      return std::nullopt;
    }
  }
  int mirror = static_cast<int>(c.inputs.size());
  for (std::size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (o.inplace_input >= 0) continue;
    if (!close(mirror++, c.inputs.size() + j, o)) return std::nullopt;
  }
  return items;
}

}  // namespace bb
