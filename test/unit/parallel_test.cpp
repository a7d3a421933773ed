#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "parallel.hpp"

// parallel_copy splits a large copy into chunks, one per usable core: every byte lands, across
// every chunk boundary, and small copies (one chunk) too.
TEST(Parallel, ACopyIsExactAcrossItsChunks) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4099}, (std::size_t{48} << 20) + 7}) {
    std::vector<uint8_t> src(n), dst(n, 0);
    for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    bb::parallel_copy(dst.data(), src.data(), n);
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0) << n << " bytes";
  }
  EXPECT_EQ(bb::chunk_count(std::size_t{48} << 20, std::size_t{16} << 20), std::min(3u, bb::usable_cores()));
}

// The host loops use the cores the process was given (taskset, a Slurm job's cpuset), not the
// machine's: a process pinned to one core splits nothing, and its copies are still exact.
TEST(Parallel, AProcessPinnedToOneCoreMakesOneChunk) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  EXPECT_EQ(bb::usable_cores(), static_cast<unsigned>(CPU_COUNT(&mine)));
  int first = 0;
  while (!CPU_ISSET(first, &mine)) ++first;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(10);
    if (bb::usable_cores() != 1) _exit(11);
    if (bb::chunk_count(std::size_t{64} << 20) != 1) _exit(12);
    std::vector<uint8_t> src(std::size_t{40} << 20, 7), dst(src.size(), 0);
    bb::parallel_copy(dst.data(), src.data(), src.size());
    _exit(dst == src ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: affinity not set, 11: usable_cores, 12: chunk_count, 13: copy";
}
