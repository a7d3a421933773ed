// The device's check of a timed block's buffers, in a worker that holds no plugin (the checker):
// the implementation's worker hands over its device buffers as shareable memory (a file
// descriptor each, through the host), the host hands over the reference's buffers (the sealed
// blob it judges by), and after each block the checker compares them where they are: inputs and
// guard bytes byte for byte, outputs within the case's tolerance (allclose.hpp's rule, element for
// element). Nothing crosses to the host but the answer. Only a "no" sends the buffers home, for
// the host's own judgement and its message (output_checks.hpp): the device never passes a call
// the host would fail, and the host never passes one the device failed.
//
// A checked call between timed blocks (judge.cpp) stays on the device too where the
// reference runs there: the reference's worker makes the call's inputs on its device from the
// host's secret (InputRecipe), the checker maps the reference's buffers, copies its inputs into
// the implementation's and compares the implementation's call with the reference's. The
// implementation's worker never sees the recipe, only the values, at its call.
//
// Here, the host's side: what is compared (the checks of a case, sent with "watch"). The
// checker worker's side, which maps and compares: worker/device_compare.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/cases.hpp"
#include "results.hpp"

namespace bb {

// One comparison: bytes of mirror `mirror` from `offset`, against the reference's buffers blob
// from `expected_offset`: byte for byte (`close` false), or `n` elements of a floating dtype
// (DLPack code and bits) within atol and rtol.
struct DeviceCheckItem {
  int mirror = 0;
  std::size_t offset = 0, bytes = 0, expected_offset = 0;
  bool close = false;
  uint8_t code = 0, bits = 0;
  std::size_t n = 0;
  double atol = 0, rtol = 0;
  bool scale_atol = false;  // Tolerance::scale_atol: atol times the largest finite |expected| above 1
  std::string output;       // a close item's output, by name (its error figures are told by it)
};
nlohmann::json to_json(const std::vector<DeviceCheckItem>& items);
std::vector<DeviceCheckItem> device_check_items_from_json(const nlohmann::json& j);

// The checks of case c's buffers (buffers_layout: every input whole, every output whole, in
// BoundCall's mirror order): nullopt where an output's dtype is not floating (the host judges).
std::optional<std::vector<DeviceCheckItem>> device_checks(const ConcreteCase& c);
// How many device mirrors a call of case c has (an in-place output has none of its own).
int mirror_count(const ConcreteCase& c);

}  // namespace bb
