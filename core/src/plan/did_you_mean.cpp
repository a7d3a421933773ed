#include "plan/did_you_mean.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace bb {

namespace {
// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours ("cdua" is one from "cuda"), case aside.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
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
