#include "did_you_mean.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace bb {

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    const std::size_t allowed = std::min<std::size_t>(3, std::max<std::size_t>(1, std::max(word.size(), c.size()) / 3));
    const bool prefix = !word.empty() && c.size() > word.size() && edit_distance(word, std::string_view(c).substr(0, word.size())) == 0;
    if (d > allowed && !prefix) continue;
    if (best.empty() || d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string c = closest_name(word, candidates);
  return c.empty() ? "" : fmt::format(" (did you mean '{}'?)", c);
}

}  // namespace bb
