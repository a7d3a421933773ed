// Host loops over large tensors split across threads: [0, n) in contiguous chunks, chunk k
// given to f(k, begin, end), chunk 0 on the calling thread. Used where each element's result
// depends on its index alone (input generation, comparison), so the split changes nothing but
// the time. Where a thread cannot be started (a worker's memory or thread limit), its chunk runs
// on the calling thread.
#pragma once

#if defined(__linux__)
#include <sched.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace bb {

// The cores this process may run on: its CPU affinity (taskset, a Slurm job's cpuset, numactl),
// not the machine's count, so host loops do not crowd cores the process was not given.
inline unsigned usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

// How many chunks n elements make: one per usable core, none smaller than `grain`. A tensor too
// small to split (most of them) asks nothing of the system.
inline std::size_t chunk_count(std::size_t n, std::size_t grain = std::size_t{1} << 20) {
  const std::size_t by_size = n / grain;
  return by_size < 2 ? 1 : std::min<std::size_t>(usable_cores(), by_size);
}

template <typename F>
void for_each_chunk(std::size_t n, std::size_t chunks, F f) {
  if (chunks <= 1) {  // one chunk: on this thread, no pool
    f(std::size_t{0}, std::size_t{0}, n);
    return;
  }
  const std::size_t step = chunks ? (n + chunks - 1) / chunks : n;
  std::vector<std::thread> pool;
  pool.reserve(chunks);
  for (std::size_t k = 1; k < chunks; ++k) {
    const std::size_t lo = std::min(n, k * step), hi = std::min(n, (k + 1) * step);
    try {
      pool.emplace_back(f, k, lo, hi);
    } catch (const std::system_error&) {
      f(k, lo, hi);
    }
  }
  f(std::size_t{0}, std::size_t{0}, std::min(n, step));
  for (auto& t : pool) t.join();
}

// memcpy of n bytes, split across threads from 32 MB up: a large copy into freshly allocated
// memory is bound by its page faults, which threads take in parallel.
inline void parallel_copy(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for_each_chunk(n, chunk_count(n, std::size_t{16} << 20), [&](std::size_t, std::size_t lo, std::size_t hi) {
    if (hi > lo) std::memcpy(d + lo, s + lo, hi - lo);
  });
}

}  // namespace bb
