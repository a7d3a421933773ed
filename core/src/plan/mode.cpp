#include "plan/mode.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace bb {

const ModeRow kModes[3] = {
    {Mode::fwd, "fwd", "", "the forward pass, <op>_kernel_impl"},
    {Mode::bwd, "bwd", "bwd:", "the backward pass alone, <op>_backward_impl (the manifest's backward:)"},
    {Mode::fwd_bwd, "fwd_bwd", "fwd_bwd:", "the forward and then the backward on its inputs, one call timed whole, both checked"},
};

const char* mode_name(Mode m) {
  for (const auto& r : kModes)
    if (r.mode == m) return r.name;
  return "?";
}

std::optional<Mode> mode_named(std::string_view name) {
  for (const auto& r : kModes)
    if (name == r.name) return r.mode;
  return std::nullopt;
}

Expected<std::vector<Mode>> parse_modes(std::string_view text) {
  std::vector<Mode> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view word = text.substr(at, comma - at);
    const auto m = mode_named(word);
    if (!m) {
      std::string names;
      for (const auto& r : kModes) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", r.name, r.description);
      return make_error(fmt::format("'{}' is no mode; the modes are {}; several: fwd,bwd", word, names));
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
    at = comma + 1;
  }
  return out;
}

std::string mode_case_id(Mode mode, const std::string& forward_id) {
  for (const auto& r : kModes)
    if (r.mode == mode) return r.id_prefix + forward_id;
  return forward_id;
}

std::string forward_case_id(const std::string& id) {
  for (const auto& r : kModes) {
    const std::string_view p = r.id_prefix;
    if (!p.empty() && id.rfind(p, 0) == 0) return id.substr(p.size());
  }
  return id;
}

}  // namespace bb
