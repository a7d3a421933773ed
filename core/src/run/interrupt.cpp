#include "run/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "run/workers/executor.hpp"

namespace bb {

namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_ignored{0};

void on_signal(int sig, siginfo_t* info, void*) {
  // A worker's signal (the sender is in a worker's process group) is a plugin's doing.
  if (info && info->si_code == SI_USER && is_worker_process(info->si_pid)) {
    g_ignored.fetch_add(1);
    return;
  }
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {  // the second one: leave now
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

}  // namespace

void install_interrupt_handlers(std::function<void()> on_interrupt) {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // The handler only records the signal; the work of stopping happens on this watcher.
  std::thread([f = std::move(on_interrupt)] {
    while (g_signal.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (f) f();
  }).detach();
}

int interrupt_signal() { return g_signal.load(); }
int ignored_worker_signals() { return g_ignored.load(); }

}  // namespace bb
