// "did you mean ...?": the known name closest to a word that is none of them, for messages about
// typos (an info record's "bfloat", a device "cpus").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bb {

// The candidate nearest `word` by edit distance (case-insensitive), where it is near enough to be
// a typo of it (at most a third of the longer one's letters, and at most 3, apart, or `word` a
// prefix of it); "" where none is.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'bfloat16'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace bb
