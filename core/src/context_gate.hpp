// Device contexts made one at a time, host-wide, the most needed first. A host's GPUs share one
// context factory: the driver makes one context at a time across all of them (about 0.1 s each
// on an H200; bench/device_context_contention.c), and contexts asked for together finish
// together, later than one after another would: on four H200s, 16 asked at once at a run's
// start all took 4.2-4.3 s, where made one at a time the first would be ready in 0.1 s and the
// last in about 1.8 s (docs/PERFORMANCE.md, "Many GPUs"). A worker's start is therefore two
// requests: its runtime and driver loaded (cuInit, which runs side by side well), then, through
// this gate, its context. A job's own workers go before spares and baselines.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace bb {

class ContextGate {
 public:
  // What waits for a context: a worker its job needs now, or one started ahead (a spare, a
  // baseline's for the job's timed blocks).
  enum class Need { now = 0, ahead = 1 };

  // The host's gate, `slots` contexts at a time (1).
  static ContextGate& host();
  explicit ContextGate(int slots) : free_(slots) {}

  // Held while one context is made. A holder that takes longer than `max_wait_s` to leave (a
  // device that hangs) does not hold the others past that: they go ahead.
  class Pass {
   public:
    Pass(ContextGate& gate, Need need, double max_wait_s);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    double waited_s() const { return waited_s_; }

   private:
    ContextGate& gate_;
    bool held_ = false;
    double waited_s_ = 0;
  };

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int free_;
  std::size_t waiting_now_ = 0;
};

}  // namespace bb
