// The walls of a worker (sandbox.hpp) on real processes: a cgroup of its own freezes every
// process a worker started, however detached, and kills them all when it retires; paths that
// other users cannot reach are told apart.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "run/workers/sandbox.hpp"

namespace {
bool alive(pid_t pid) { return kill(pid, 0) == 0; }
}  // namespace

TEST(Sandbox, ACgroupFreezesAndKillsWhatLeftTheProcessGroup) {
  if (bb::sandbox_support().freezer.empty()) GTEST_SKIP() << "no writable cgroup freezer here";
  bb::WorkerCgroup cg;
  ASSERT_TRUE(cg.create());
  // Shared memory: the escaped grandchild's counter and its pid.
  auto* shared = static_cast<std::atomic<long>*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  new (&shared[0]) std::atomic<long>(0);
  new (&shared[1]) std::atomic<long>(0);
  const std::string procs = cg.procs_file();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bb::PreparedSandbox s;
    s.cgroup_procs = procs.c_str();
    const char* step = nullptr;
    if (bb::enter_sandbox_before_exec(s, &step) != 0) _exit(2);
    // Double fork and setsid: out of the process group, reparented away from the worker.
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        shared[1] = getpid();
        for (;;) shared[0]++;
      }
      _exit(0);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (shared[1].load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const pid_t escaped = static_cast<pid_t>(shared[1].load());
  ASSERT_GT(escaped, 0);

  ASSERT_TRUE(cg.freeze(true));
  const long frozen_at = shared[0].load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(shared[0].load(), frozen_at) << "a frozen process ran";
  ASSERT_TRUE(cg.freeze(false));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_GT(shared[0].load(), frozen_at) << "a thawed process did not run";

  cg.kill_all_and_remove();
  const auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive(escaped) && std::chrono::steady_clock::now() < gone) {
    waitpid(escaped, nullptr, WNOHANG);  // reparented to us only if we are the subreaper; harmless otherwise
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // A zombie (not reaped by its new parent) no longer runs: the counter stops.
  const long after = shared[0].load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(shared[0].load(), after) << "the detached process outlived its worker's cgroup";
  munmap(shared, 4096);
}

TEST(Sandbox, PathsOtherUsersCannotReach) {
  char dir[] = "/tmp/bb-reach-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);  // mode 0700, as mktemp -d makes
  const std::string file = std::string(dir) + "/f";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  chmod(file.c_str(), 0644);
  EXPECT_FALSE(bb::others_can_reach(file));
  chmod(dir, 0755);
  EXPECT_TRUE(bb::others_can_reach(file));
  chmod(file.c_str(), 0600);
  EXPECT_FALSE(bb::others_can_reach(file));
  unlink(file.c_str());
  rmdir(dir);
}
