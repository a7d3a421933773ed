#include "run/worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "run/workers/worker_supply.hpp"
#include "trace.hpp"

namespace bb {

void EventQueue::push(Event e) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(e));
  }
  ready_.notify_one();
}

std::optional<Event> EventQueue::pop() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty() || closed_; });
  if (events_.empty()) return std::nullopt;
  Event e = std::move(events_.front());
  events_.pop_front();
  return e;
}

void EventQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

WorkerPool::WorkerPool(std::vector<WorkerSlot> slots, Scheduler& scheduler, SweepContext& ctx,
                       std::function<std::unique_ptr<Executor>()> make_executor, EventQueue& events)
    : slots_(std::move(slots)), scheduler_(scheduler), ctx_(ctx), make_executor_(std::move(make_executor)), events_(events) {
  running_ = slots_.size();
  stats_.resize(slots_.size());
  if (slots_.empty()) events_.close();
  for (std::size_t i = 0; i < slots_.size(); ++i) threads_.emplace_back([this, i] { serve(slots_[i], stats_[i], static_cast<int>(i)); });
}

WorkerPool::~WorkerPool() { join(); }

void WorkerPool::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void WorkerPool::serve(const WorkerSlot& slot, WorkerStats& stats, int index) {
  stats.name = slot.name;
  SlotWorkers workers(ctx_, slot.name, slot.ordinal, slot_device(slot.kinds, slot.ordinal), make_executor_);
  JobEvents events;
  events.started = [&](const TestResult& r) { events_.push({Event::Kind::started, r, 0, "", 0}); };
  events.finished = [&](TestResult r, std::size_t order) { events_.push({Event::Kind::finished, std::move(r), order, "", 0}); };
  events.warning = [&](const std::string& text) { events_.push({Event::Kind::warning, {}, 0, text, 0}); };
  events.measured = [&](double s) { events_.push({Event::Kind::measured, {}, 0, "", s}); };
  // A fresh worker process for each implementation, behind walls that let it see its own
  // library only: static state in one plugin never meets another's. Pieces of one
  // implementation share a worker.
  std::optional<std::size_t> previous;
  while (auto id = scheduler_.take(slot.kinds, previous, index)) {
    const auto t0 = std::chrono::steady_clock::now();
    const Job& job = scheduler_.job(*id);
    bool impl_fresh = false;
    if (workers.switch_impl(job, impl_fresh)) ++stats.worker_starts;
    previous = id;
    if (auto next = scheduler_.next_implementation(slot.kinds, *id, index)) workers.spare_for(scheduler_.job(*next));
    const auto& impl_name = ctx_.plans[job.op].impls[job.impl].name;
    trace_line({{"side", slot.name}, {"cmd", "job"}, {"impl", impl_name}, {"tests", job.tests.size()}});
    workers.start_for(job, impl_fresh);
    run_job(job, slot.ordinal, workers, ctx_, events);
    trace_line({{"side", slot.name}, {"cmd", "job_done"}, {"impl", impl_name}});
    scheduler_.done(*id);
    ++stats.jobs;
    stats.tests += job.tests.size();
    stats.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  stats.started_ahead = workers.started_ahead();
  workers.end();
  trace_line({{"side", slot.name}, {"cmd", "workers_ended"}});
  std::lock_guard lock(mutex_);
  if (--running_ == 0) events_.close();
}

}  // namespace bb
