// One CPU for both sides of a CPU pairing (Linux). The two sides of a paired measurement run in
// two workers, separate processes, and the scheduler keeps each on the core it last ran on: on
// a host whose cores are not equally fast at the moment (another job on a core or on its
// hyperthread sibling, a VM's vCPUs on a busy host), one side is timed on the slower core for
// many blocks in a row. The blocks' ratios then come in runs of 0.6 or 1.7 instead of scattering
// about 1, and the sign-test interval, which takes the pairs as independent, misses 1.00 for an
// implementation timed against itself (docs/PERFORMANCE.md, "Self-speedup across processes"). With
// both sides on one core, each pair compares like with like.
//
// Only single-threaded workers are pinned: an implementation that runs threads of its own (a
// pool that stays, or threads started and joined within each call: its first block used more
// than a core's time) is timed on every core its run may use, as it would be used. A side found
// on other CPUs before a block ends the pinning of both, with a note. What this does not see: a
// plugin that moves itself off the CPU within a block and back before it ends (the affinity is
// read between blocks); a cpuset cgroup per worker would enforce the pin.
#pragma once

#include <vector>

namespace bb {

// What a worker runs: its processes and their threads (a worker's cgroup lists both).
struct WorkerTasks {
  std::vector<long> processes;
  std::vector<long> threads;
  // Every process runs one thread (a worker's supervisor and the worker itself: two of each).
  bool single_threaded() const { return !threads.empty() && threads.size() == processes.size(); }
};

// The threads of process `pid` (/proc/<pid>/task); empty where it cannot be read.
std::vector<long> threads_of(long pid);
// Process `pid`, its children, theirs, ... with their threads (/proc/<pid>/task/<tid>/children):
// a worker with no cgroup of its own.
WorkerTasks process_tree(long pid);

// CPU seconds the processes have used so far, their ended threads' included (each process's
// CPU-time clock, in nanoseconds; where it cannot be read, /proc/<pid>/stat's 10 ms ticks); a
// process that has ended counts nothing.
double cpu_seconds(const std::vector<long>& processes);

// Whether every thread in `threads` may run on CPU `cpu` and on no other.
bool pinned_to(const std::vector<long>& threads, int cpu);

// The CPU this thread runs on now, or -1 where that cannot be known.
int current_cpu();

// A CPU for one pairing, held until released: `preferred` if no other pairing of this process
// holds it, else another this process may use that none holds; -1 when every one is held (with
// -j, CPU tests are timed side by side: each pairing keeps a core of its own).
int claim_cpu(int preferred);
void release_cpu(int cpu);

// Sets the affinity of every thread in `threads`: to the one CPU `cpu`, or, with cpu < 0, to
// every CPU this process may use (the calling thread's CPUs at its first call). False if any could not be set (a thread that has ended
// meanwhile is not a failure).
bool pin_threads(const std::vector<long>& threads, int cpu);

}  // namespace bb
