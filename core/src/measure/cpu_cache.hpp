// Evicting data from the CPU's caches, for cold timing: every line of a range is written back
// if dirty and invalidated at every level (clflushopt or clflush on x86-64, dc civac on AArch64),
// so the next access comes from memory and no dirty line is left to be written back inside a
// timed region.
#pragma once

#include <cstddef>

namespace bb {

// How lines are evicted. clflush is ordered against every other clflush, one line after
// another (about 100 ns a dirty line on some Xeons under a hypervisor: 80 ms for a 48 MB case,
// before each cold sample); clflushopt is ordered only by the fence that ends the range, so the
// core keeps many in flight. Both write back and invalidate at every level.
enum class EvictWith { best, clflush, clflushopt };
// What `best` is on this CPU: "clflushopt", "clflush", "dc civac" or "displace" (reading a
// buffer far larger than any cache, where no instruction is known).
const char* evict_instruction();

void evict_from_cpu_caches(const void* data, std::size_t bytes, EvictWith with = EvictWith::best);

}  // namespace bb
