#include "measure/run_queue.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace bb {

namespace {
// A schedstat file: "<ran ns> <waited ns> <timeslices>" (/proc/<tid>/schedstat names a thread
// of any process; where the kernel keeps no schedstat, no CONFIG_SCHED_INFO, it is missing).
bool read_schedstat(const char* path, RunQueueSnapshot::Thread& out) {
#if defined(__linux__)
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  unsigned long long ran = 0, waited = 0;
  const bool ok = std::fscanf(f, "%llu %llu", &ran, &waited) == 2;
  std::fclose(f);
  if (!ok) return false;
  out.ran = 1e-9 * static_cast<double>(ran);
  out.waited = 1e-9 * static_cast<double>(waited);
  return true;
#else
  (void)path;
  (void)out;
  return false;
#endif
}
}  // namespace

double own_thread_wait() {
  RunQueueSnapshot::Thread t;
  return read_schedstat("/proc/thread-self/schedstat", t) ? t.waited : 0;
}

RunQueueSnapshot run_queue_snapshot(const WorkerTasks& tasks, std::optional<double> group_cpu) {
  RunQueueSnapshot s;
  s.group_cpu = group_cpu;
  for (long tid : tasks.threads) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/schedstat", tid);
    RunQueueSnapshot::Thread t;
    if (read_schedstat(path, t)) {
      s.threads[tid] = t;
      s.readable = true;
    }
  }
  return s;
}

double foreign_wait(const RunQueueSnapshot& before, const RunQueueSnapshot& after, double host_waited) {
  // Without the cgroup's count, a thread or child process that worked and ended within the block
  // would be missing from the worker's own CPU time: nothing is taken out then.
  if (!before.readable || !after.readable || !before.group_cpu || !after.group_cpu) return 0;
  // Each thread's share of the block; one that began within it counts from nothing (a thread id
  // reused by a new thread reads as less than before: counted from nothing too).
  double total_ran = 0, longest_ran = -1, longest_waited = 0;
  for (const auto& [tid, now] : after.threads) {
    RunQueueSnapshot::Thread then;
    if (auto it = before.threads.find(tid); it != before.threads.end() && it->second.ran <= now.ran && it->second.waited <= now.waited)
      then = it->second;
    const double ran = now.ran - then.ran, waited = now.waited - then.waited;
    total_ran += ran;
    if (ran > longest_ran) longest_ran = ran, longest_waited = waited;
  }
  if (longest_ran < 0) return 0;
  // Threads and processes that ended within the block ran too: the cgroup's count has them.
  total_ran = std::max(total_ran, *after.group_cpu - *before.group_cpu);
  return std::max(0.0, longest_waited + std::max(0.0, host_waited) - (total_ran - longest_ran));
}

}  // namespace bb
