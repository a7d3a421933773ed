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

#include <filesystem>
#include <functional>
#include <set>
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

// The CPUs that share `cpu`'s physical core (its hyperthreads), itself included, as the kernel
// lists them under `sys` (cpuN/topology/thread_siblings_list); {cpu} where that cannot be read.
std::vector<int> core_siblings(int cpu, const std::filesystem::path& sys = "/sys/devices/system/cpu");

// Physical cores among the CPUs this process may use (hyperthreads of one core count once).
int usable_physical_cores();

// Which CPU a pairing gets, of `usable`, while `claimed` are held by others: one whose whole
// physical core is free (no sibling held: two pairings on the hyperthreads of one core slow each
// other by tens of percent), `preferred` if it is such a one; else, where every core has a held
// sibling, a free CPU (`preferred` first); -1 when every one is held.
int choose_cpu(int preferred, const std::vector<int>& usable, const std::function<std::vector<int>(int)>& siblings,
               const std::set<int>& claimed);

// A CPU for one pairing, held until released: choose_cpu over the CPUs this process may use and
// those the pairings of this process hold (CPU tests are timed side by side on a host of many
// cores: each pairing keeps a physical core of its own).
int claim_cpu(int preferred);
void release_cpu(int cpu);

// Sets the affinity of every thread in `threads`: to the one CPU `cpu`, or, with cpu < 0, to
// every CPU this process may use (the calling thread's CPUs at its first call). False if any could not be set (a thread that has ended
// meanwhile is not a failure).
bool pin_threads(const std::vector<long>& threads, int cpu);

}  // namespace bb
