// Pinning a CPU pairing's two sides to one core (cpu_pin.hpp): the threads and processes a worker
// runs, the affinity set and read back, and the CPU time a process used.
#include "measure/cpu_pin.hpp"

#if defined(__linux__)
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

namespace {

long this_thread_id() { return static_cast<long>(syscall(SYS_gettid)); }
bool has(const std::vector<long>& v, long x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Spins until this thread has used `seconds` of CPU time (not of wall time: a busy machine
// stretches the wall, not the amount used).
void burn(double seconds) {
  timespec t{};
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  while (static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) < seconds);
}

TEST(CpuPin, AProcessThreadsAreListedAndAThreadStartedShowsUp) {
  const auto before = bb::threads_of(getpid());
  EXPECT_TRUE(has(before, this_thread_id()));
  long other = 0;
  bool stop = false;
  std::thread t([&] {
    other = this_thread_id();
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) std::this_thread::yield();
  });
  while (!__atomic_load_n(&other, __ATOMIC_ACQUIRE)) std::this_thread::yield();
  const auto during = bb::threads_of(getpid());
  __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
  t.join();
  EXPECT_TRUE(has(during, other));
  EXPECT_FALSE(has(before, other));
  EXPECT_TRUE(bb::threads_of(999999999).empty());
}

TEST(CpuPin, AProcessTreeHoldsTheChildrenOfAProcessWithNoCgroup) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const bb::WorkerTasks tree = bb::process_tree(getpid());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(has(tree.processes, getpid()));
  EXPECT_TRUE(has(tree.processes, child));
  EXPECT_TRUE(has(tree.threads, child));  // a single-threaded process's one thread is itself
  EXPECT_TRUE(has(tree.threads, this_thread_id()));
}

TEST(CpuPin, SingleThreadedMeansOneThreadPerProcess) {
  EXPECT_FALSE(bb::WorkerTasks{}.single_threaded());  // no worker: nothing to pin
  EXPECT_TRUE((bb::WorkerTasks{{10, 12}, {10, 12}}.single_threaded()));
  EXPECT_FALSE((bb::WorkerTasks{{10, 12}, {10, 11, 12}}.single_threaded()));
}

TEST(CpuPin, AThreadPinnedToOneCpuRunsThereAndIsGivenEveryCpuBack) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &all)) ++cpu;
  const long me = this_thread_id();
  ASSERT_TRUE(bb::pin_threads({me}, cpu));
  EXPECT_TRUE(bb::pinned_to({me}, cpu));
  EXPECT_FALSE(bb::pinned_to({me}, cpu + 1));
  sched_yield();
  EXPECT_EQ(bb::current_cpu(), cpu);
  ASSERT_TRUE(bb::pin_threads({me}, -1));  // every CPU this process may use: this thread's own set, here
  cpu_set_t back;
  CPU_ZERO(&back);
  ASSERT_EQ(sched_getaffinity(0, sizeof back, &back), 0);
  EXPECT_TRUE(CPU_EQUAL(&back, &all));
  EXPECT_EQ(bb::pinned_to({me}, cpu), CPU_COUNT(&all) == 1);
  EXPECT_TRUE(bb::pin_threads({999999999}, cpu)) << "a thread that has ended is no failure";
  EXPECT_FALSE(bb::pin_threads({me}, CPU_SETSIZE));
}

TEST(CpuPin, PairingsSideBySideClaimCpusOfTheirOwn) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  std::vector<int> usable;
  for (int k = 0; k < CPU_SETSIZE; ++k)
    if (CPU_ISSET(k, &all)) usable.push_back(k);
  std::vector<int> held;
  for (std::size_t k = 0; k < usable.size(); ++k) {
    const int cpu = bb::claim_cpu(usable.front());  // the first is asked for every time
    ASSERT_GE(cpu, 0);
    EXPECT_TRUE(has(std::vector<long>(usable.begin(), usable.end()), cpu));
    EXPECT_FALSE(has(std::vector<long>(held.begin(), held.end()), cpu)) << "held twice: " << cpu;
    held.push_back(cpu);
  }
  EXPECT_EQ(held.front(), usable.front());
  EXPECT_EQ(bb::claim_cpu(usable.front()), -1) << "every CPU is held";
  bb::release_cpu(held.back());
  EXPECT_EQ(bb::claim_cpu(usable.front()), held.back()) << "the one given back";
  for (int cpu : held) bb::release_cpu(cpu);
  EXPECT_EQ(bb::claim_cpu(-1), usable.front());
  bb::release_cpu(usable.front());
}

// Two pairings on the hyperthreads of one core slow each other: a pairing gets a CPU whose whole
// core is free while there is one. The topology here is made up: eight CPUs on four cores,
// numbered as on most servers (0 and 4 share a core) and as on many VMs (0 and 1 do).
TEST(CpuPin, APairingGetsAWholeCoreWhileOneIsFree) {
  const std::vector<int> usable{0, 1, 2, 3, 4, 5, 6, 7};
  auto server = [](int cpu) { return std::vector<int>{cpu % 4, cpu % 4 + 4}; };
  auto vm = [](int cpu) { return std::vector<int>{cpu - cpu % 2, cpu - cpu % 2 + 1}; };
  for (const auto& [name, siblings] : {std::pair{"server", std::function<std::vector<int>(int)>(server)}, std::pair{"vm", std::function<std::vector<int>(int)>(vm)}}) {
    SCOPED_TRACE(name);
    std::set<int> claimed;
    std::set<std::vector<int>> cores;
    for (int k = 0; k < 4; ++k) {
      const int cpu = bb::choose_cpu(0, usable, siblings, claimed);
      ASSERT_GE(cpu, 0);
      EXPECT_TRUE(cores.insert(siblings(cpu)).second) << "CPU " << cpu << " shares a core with a pairing's";
      claimed.insert(cpu);
    }
    // Every core has a pairing: the free hyperthreads next, the one asked for first.
    const int fifth = bb::choose_cpu(-1, usable, siblings, claimed);
    EXPECT_GE(fifth, 0);
    EXPECT_FALSE(claimed.count(fifth));
    const int asked = *std::find_if(usable.begin(), usable.end(), [&](int c) { return !claimed.count(c) && c != fifth; });
    EXPECT_EQ(bb::choose_cpu(asked, usable, siblings, claimed), asked);
  }
  // The one asked for, where its core is free; a CPU outside the usable set never.
  EXPECT_EQ(bb::choose_cpu(6, usable, server, {}), 6);
  EXPECT_EQ(bb::choose_cpu(9, usable, server, {}), 0);
  EXPECT_EQ(bb::choose_cpu(2, usable, server, {6}), 0) << "6 is 2's sibling";
  EXPECT_EQ(bb::choose_cpu(0, {0, 1}, vm, {0, 1}), -1) << "every CPU is held";
}

TEST(CpuPin, SiblingsAreReadAsTheKernelListsThem) {
  const auto sys = std::filesystem::temp_directory_path() / ("bb_cpu_topology_" + std::to_string(getpid()));
  auto write = [&](int cpu, const std::string& text) {
    std::filesystem::create_directories(sys / ("cpu" + std::to_string(cpu)) / "topology");
    std::ofstream(sys / ("cpu" + std::to_string(cpu)) / "topology" / "thread_siblings_list") << text;
  };
  write(0, "0,32\n");
  write(1, "0-1\n");
  write(2, "2\n");
  write(3, "0,x\n");
  write(4, "8-9\n");  // does not name the CPU itself
  EXPECT_EQ(bb::core_siblings(0, sys), (std::vector<int>{0, 32}));
  EXPECT_EQ(bb::core_siblings(1, sys), (std::vector<int>{0, 1}));
  EXPECT_EQ(bb::core_siblings(2, sys), (std::vector<int>{2}));
  EXPECT_EQ(bb::core_siblings(3, sys), (std::vector<int>{3})) << "what cannot be read: the CPU alone";
  EXPECT_EQ(bb::core_siblings(4, sys), (std::vector<int>{4}));
  EXPECT_EQ(bb::core_siblings(5, sys), (std::vector<int>{5})) << "no such file";
  std::filesystem::remove_all(sys);
  // This machine's: every usable CPU is on some core, and cores are no more than CPUs.
  EXPECT_GE(bb::usable_physical_cores(), 1);
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  EXPECT_LE(bb::usable_physical_cores(), CPU_COUNT(&all));
}

TEST(CpuPin, CpuSecondsCountEveryThreadAProcessRanEndedOnesIncluded) {
  const double before = bb::cpu_seconds({getpid()});
  std::thread a([] { burn(0.2); }), b([] { burn(0.2); });
  a.join();
  b.join();
  const double used = bb::cpu_seconds({getpid()}) - before;
  // 0.4 s of CPU between the two threads, counted in clock ticks (10 ms), after they ended.
  EXPECT_GE(used, 0.35);
  EXPECT_LT(used, 2.0);
  EXPECT_EQ(bb::cpu_seconds({999999999}), 0.0);

  // Another process's, as the host reads a worker's: a child that uses 0.1 s, then waits.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    burn(0.1);
    pause();
    _exit(0);
  }
  double seen = 0;
  for (int k = 0; k < 500 && seen < 0.1; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = bb::cpu_seconds({child});
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_GE(seen, 0.1);
  EXPECT_LT(seen, 0.5);
}

}  // namespace
#endif
