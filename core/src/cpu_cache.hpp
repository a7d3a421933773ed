// Evicting data from the CPU's caches, for cold timing: every line of a range is written back
// if dirty and invalidated at every level (clflush on x86-64, dc civac on AArch64), so the next
// access comes from memory and no dirty line is left to be written back inside a timed region.
#pragma once

#include <cstddef>

namespace bb {

void evict_from_cpu_caches(const void* data, std::size_t bytes);

}  // namespace bb
