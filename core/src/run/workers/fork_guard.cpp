#include "run/workers/fork_guard.hpp"

#include <pthread.h>

#include <mutex>

namespace bb {

namespace {

pthread_rwlock_t g_windows = PTHREAD_RWLOCK_INITIALIZER;

void before_fork() { pthread_rwlock_wrlock(&g_windows); }
void after_fork_in_parent() { pthread_rwlock_unlock(&g_windows); }
// The child has one thread, the one that forked: the lock starts over, free.
void after_fork_in_child() { g_windows = PTHREAD_RWLOCK_INITIALIZER; }

}  // namespace

ForkFreeWindow::ForkFreeWindow() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
  pthread_rwlock_rdlock(&g_windows);
}

ForkFreeWindow::~ForkFreeWindow() { pthread_rwlock_unlock(&g_windows); }

}  // namespace bb
