// The foreign wait of a worker (run_queue.hpp): time other processes kept it from running, net of
// the worker's own CPU time. On controlled snapshots, then on real processes pinned to one core:
// a process outside the worker's cgroup is foreign; the worker's own helper thread, and a child
// process that works and ends between the two readings, are not.
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "measure/run_queue.hpp"
#include "run/workers/sandbox.hpp"

namespace {

bb::RunQueueSnapshot snapshot(std::initializer_list<std::tuple<long, double, double>> threads, std::optional<double> group) {
  bb::RunQueueSnapshot s;
  for (const auto& [tid, ran, waited] : threads) s.threads[tid] = {ran, waited};
  s.readable = !s.threads.empty();
  s.group_cpu = group;
  return s;
}

}  // namespace

TEST(RunQueue, TheLongestThreadsWaitNetOfTheWorkersOwnCpu) {
  // Alone: all of its wait was another process's doing.
  EXPECT_DOUBLE_EQ(bb::foreign_wait(snapshot({{1, 0, 0}}, 0), snapshot({{1, 1.0, 0.5}}, 1.0)), 0.5);
  // Its own helper ran 0.4 s of the 0.5 s it waited: only 0.1 s was foreign.
  EXPECT_NEAR(bb::foreign_wait(snapshot({{1, 0, 0}, {2, 0, 0}}, 0), snapshot({{1, 1.0, 0.5}, {2, 0.4, 0.1}}, 1.4)), 0.1, 1e-12);
  // A thread that began within the block counts from nothing.
  EXPECT_NEAR(bb::foreign_wait(snapshot({{1, 0, 0}}, 0), snapshot({{1, 1.0, 0.5}, {3, 0.3, 0}}, 1.3)), 0.2, 1e-12);
  // A child that worked 0.5 s and ended: only the cgroup's count has it.
  EXPECT_DOUBLE_EQ(bb::foreign_wait(snapshot({{1, 0, 0}}, 0), snapshot({{1, 1.0, 0.5}}, 1.5)), 0.0);
  // The host's thread waited to read the reply: the same delay, on the host's side; less the
  // worker's own other CPU time all the same.
  EXPECT_NEAR(bb::foreign_wait(snapshot({{1, 0, 0}}, 0), snapshot({{1, 1.0, 0.5}}, 1.0), 0.25), 0.75, 1e-12);
  EXPECT_NEAR(bb::foreign_wait(snapshot({{1, 0, 0}, {2, 0, 0}}, 0), snapshot({{1, 1.0, 0.0}, {2, 0.6, 0}}, 1.6), 0.25), 0.0, 1e-12);
  // Without the cgroup's count nothing is taken out; nor without schedstat.
  EXPECT_DOUBLE_EQ(bb::foreign_wait(snapshot({{1, 0, 0}}, std::nullopt), snapshot({{1, 1.0, 0.5}}, std::nullopt)), 0.0);
  EXPECT_DOUBLE_EQ(bb::foreign_wait(bb::RunQueueSnapshot{}, bb::RunQueueSnapshot{}), 0.0);
}

namespace {

void pin_to(int cpu, pid_t tid = 0) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(tid, sizeof set, &set);
}

void spin_for(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

int first_cpu() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  return 0;
}

// A process that spins on `cpu` until killed.
pid_t hog(int cpu) {
  const pid_t pid = fork();
  if (pid == 0) {
    pin_to(cpu);
    for (;;) {
    }
  }
  return pid;
}

enum class Company { foreign_process, own_thread, own_child };

// A worker in a cgroup of its own, spinning on one core in the company named, read 300 ms apart.
// nullopt where this machine cannot say (no cgroup v2 to make, no schedstat).
std::optional<double> foreign_wait_of_worker(Company company) {
  bb::WorkerCgroup group;
  if (!group.create() || !group.cpu_seconds()) return std::nullopt;
  const int cpu = first_cpu();
  const std::string procs = group.procs_file();
  int ready[2];
  if (pipe(ready) != 0) return std::nullopt;
  const pid_t worker = fork();
  if (worker == 0) {
    close(ready[0]);
    if (FILE* f = std::fopen(procs.c_str(), "we")) std::fputs("0", f), std::fclose(f);
    pin_to(cpu);
    if (company == Company::own_thread) {
      std::thread([cpu] {
        pin_to(cpu);
        for (;;) {
        }
      }).detach();
    }
    if (company == Company::own_child && fork() == 0) {
      pin_to(cpu);
      spin_for(std::chrono::milliseconds(100));  // works (at half the core: 200 ms), then ends before the second reading
      _exit(0);
    }
    (void)!write(ready[1], "r", 1);
    for (;;) {
    }
  }
  close(ready[1]);
  char c;
  (void)!read(ready[0], &c, 1);
  close(ready[0]);
  const pid_t other = company == Company::foreign_process ? hog(cpu) : -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before = bb::run_queue_snapshot(group.tasks(), group.cpu_seconds());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto after = bb::run_queue_snapshot(group.tasks(), group.cpu_seconds());
  if (other > 0) kill(other, SIGKILL), waitpid(other, nullptr, 0);
  group.kill_all_and_remove();
  waitpid(worker, nullptr, 0);
  if (!before.readable) return std::nullopt;
  return bb::foreign_wait(before, after);
}

}  // namespace

TEST(RunQueue, AnotherProcessOnTheWorkersCoreIsForeignItsOwnThreadsAndChildrenAreNot) {
  const auto foreign = foreign_wait_of_worker(Company::foreign_process);
  if (!foreign) GTEST_SKIP() << "no cgroup v2 of a worker's own, or no schedstat, on this machine";
  // Two spinners on one core for 300 ms: the worker waits about half of it.
  EXPECT_GT(*foreign, 0.08);
  EXPECT_LT(*foreign, 0.32);
  // Its own helper keeps it waiting as long; none of that is foreign.
  EXPECT_LT(*foreign_wait_of_worker(Company::own_thread), 0.03);
  // Nor a child that worked a third of it and ended before the second reading.
  EXPECT_LT(*foreign_wait_of_worker(Company::own_child), 0.03);
}
