// The workers of a run: one thread per worker slot, each with its own workers (the
// implementation's, the reference's and the baseline's processes: worker_supply.hpp's SlotWorkers),
// taking jobs from the scheduler for its device kinds until none remain. What they
// produce goes to one event queue, which the session's thread drains into the reporters, so
// reporters never see two threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "run/job_runner.hpp"
#include "run/scheduler.hpp"
#include "run/workers/executor.hpp"

namespace bb {

// One worker: the device kinds it serves and the device ordinal it uses for them; "cuda:1".
struct WorkerSlot {
  std::vector<std::string> kinds;
  int ordinal = 0;
  std::string name;
};

struct Event {
  enum class Kind { started, finished, warning, measured };
  Kind kind = Kind::finished;
  TestResult result;
  std::size_t order = 0;
  std::string text;
  double seconds = 0;
};

class EventQueue {
 public:
  void push(Event e);
  // The next event; nullopt once closed and drained.
  std::optional<Event> pop();
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  bool closed_ = false;
};

// What a worker did, for the run's wall-time breakdown.
struct WorkerStats {
  std::string name;
  std::size_t jobs = 0, tests = 0;
  std::size_t worker_starts = 0;  // fresh worker processes (one per implementation it served)
  std::size_t started_ahead = 0;  // of those, started during the previous implementation's last job
  double busy_s = 0;              // seconds inside jobs
};

class WorkerPool {
 public:
  // Starts the threads; the queue is closed when the last one ends.
  WorkerPool(std::vector<WorkerSlot> slots, Scheduler& scheduler, SweepContext& ctx,
             std::function<std::unique_ptr<Executor>()> make_executor, EventQueue& events);
  ~WorkerPool();
  void join();
  // After join(): one per slot.
  const std::vector<WorkerStats>& stats() const { return stats_; }

 private:
  // `index`: the slot's, as the scheduler knows it (its claims: scheduler.hpp).
  void serve(const WorkerSlot& slot, WorkerStats& stats, int index);
  std::vector<WorkerStats> stats_;
  std::vector<WorkerSlot> slots_;
  Scheduler& scheduler_;
  SweepContext& ctx_;
  std::function<std::unique_ptr<Executor>()> make_executor_;
  EventQueue& events_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::size_t running_ = 0;
};

}  // namespace bb
