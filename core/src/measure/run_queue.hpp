// How long the machine's other work kept a worker from running during one block, from the
// kernel's own account (Linux: /proc/<pid>/task/<tid>/schedstat, the time each thread ran and the
// time it waited on a run queue, runnable but not running), which no plugin can write.
//
// The clock audit (clock_audit.hpp) compares the host's time around an implementation's block
// with what its worker reported; time the worker spent waiting for a CPU that another process
// held is in the first and not the second, so on a busy machine (another test beside it, a
// pinned core shared with a job) an honest implementation read as a forged clock. That wait is
// now measured and taken out of the host's time, as follows.
//
// For the thread t that ran longest in the block, the wait W_t is time some CPU it may run on
// was busy with something else: the worker's own other tasks or another process's. The worker's
// own tasks ran C - C_t (C: every task of the worker, ended ones included, as the worker's cgroup
// v2 counts them), so
//     foreign wait = max(0, W_t + W_host - (C - C_t))
// is at most the time other processes took from t and from the host's thread that waits for the
// block's reply (W_host: its own run-queue wait over the same span). Whatever a plugin does (helpers that work
// while t waits, a child process, threads that come and go) its own CPU time is subtracted:
// it cannot make its own work read as the machine's. What it can use is only real foreign load,
// and on a quiet machine there is none. Where the worker has no cgroup v2 of its own (no count
// of its ended tasks), or the kernel keeps no schedstat, nothing is taken out.
#pragma once

#include <map>
#include <optional>

#include "measure/cpu_pin.hpp"

namespace bb {

// Each thread's run time and run-queue wait (seconds) at one moment, and the CPU time of the
// worker's cgroup (v2: ended tasks included; nullopt where there is none).
struct RunQueueSnapshot {
  struct Thread {
    double ran = 0, waited = 0;
  };
  std::map<long, Thread> threads;
  std::optional<double> group_cpu;
  bool readable = false;  // schedstat could be read for at least one thread
};

RunQueueSnapshot run_queue_snapshot(const WorkerTasks& tasks, std::optional<double> group_cpu);

// The calling thread's run-queue wait so far (seconds; 0 where schedstat cannot be read).
double own_thread_wait();

// The foreign wait between two snapshots of one worker (above); 0 where it cannot be read.
// `host_waited`: the run-queue wait of the host's thread that asked for the block and read its
// reply over the same span (own_thread_wait()), the host's side of the same delay; it is added
// to W_t before the worker's own other CPU time is taken off (a plugin that keeps every core
// busy to delay the host pays for it in that CPU time; only on a one-core machine could its
// timing thread alone delay the host).
double foreign_wait(const RunQueueSnapshot& before, const RunQueueSnapshot& after, double host_waited = 0);

}  // namespace bb
