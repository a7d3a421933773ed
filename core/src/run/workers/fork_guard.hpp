// A writable shared mapping must never reach a child process. Between a mapping's mmap and its
// MADV_DONTFORK, a fork() in another thread (a worker being started) gives the child a writable
// copy; a child that does not exec at once (a sandbox's relay lives as long as its worker) then
// keeps the memfd from being sealed (F_SEAL_WRITE fails with EBUSY) for as long as it lives. Seen
// on a 64-core host: "sealing a memfd: Device or resource busy" on a few CPU tests of 4,000.
// Such a window is held open under a shared lock that every fork() of the process (through
// pthread_atfork) takes exclusively, so no fork happens inside one.
#pragma once

namespace bb {

// Held from a shared mapping's mmap until MADV_DONTFORK is on it: no fork() of this process
// starts meanwhile (one already under way finishes first). Windows of several threads overlap.
class ForkFreeWindow {
 public:
  ForkFreeWindow();
  ~ForkFreeWindow();
  ForkFreeWindow(const ForkFreeWindow&) = delete;
  ForkFreeWindow& operator=(const ForkFreeWindow&) = delete;
};

}  // namespace bb
