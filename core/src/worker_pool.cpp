#include "worker_pool.hpp"

#include "spare_worker.hpp"
#include "worker_starts.hpp"
#include "trace.hpp"

#include <chrono>

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
  WorkerStarts starts(ctx_.options.isolate);
  WorkerSet workers;
  workers.impl = make_executor_();
  workers.reference = make_executor_();
  workers.baseline = make_executor_();
  const bool cuda = std::find(slot.kinds.begin(), slot.kinds.end(), "cuda") != slot.kinds.end();
  workers.cuda_ordinal = cuda ? slot.ordinal : -1;
  if (ctx_.options.isolate) {
    workers.checker = make_executor_();
    workers.checker->set_walls(walls_for(ctx_, "", workers.cuda_ordinal));  // it may see no library
    workers.make = make_executor_;
    workers.starts = &starts;
  }
  // The next implementation's worker, started during the last job of the current one
  // (spare_worker.hpp), and the workers starting or ending beside the job (worker_starts.hpp):
  // every test waits for them before timing.
  SpareWorker spare;
  WorkerStock* stock = ctx_.stock;
  workers.quiet = [&spare, &starts, stock, &slot] {
    const auto t0 = std::chrono::steady_clock::now();
    spare.settle();
    const auto t1 = std::chrono::steady_clock::now();
    starts.settle();
    const auto t2 = std::chrono::steady_clock::now();
    if (stock) stock->settle();
    if (tracing()) {
      const auto t3 = std::chrono::steady_clock::now();
      auto s = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
      trace_line({{"side", slot.name}, {"cmd", "quiet"}, {"spare_s", s(t0, t1)}, {"starts_s", s(t1, t2)}, {"stock_s", s(t2, t3)}});
    }
  };
  JobEvents events;
  events.started = [&](const TestResult& r) { events_.push({Event::Kind::started, r, 0, "", 0}); };
  events.finished = [&](TestResult r, std::size_t order) { events_.push({Event::Kind::finished, std::move(r), order, "", 0}); };
  events.warning = [&](const std::string& text) { events_.push({Event::Kind::warning, {}, 0, text, 0}); };
  events.measured = [&](double s) { events_.push({Event::Kind::measured, {}, 0, "", s}); };
  // A fresh worker process for each implementation, behind walls that let it see its own
  // library only: static state in one plugin never meets another's. Pieces of one
  // implementation share a worker.
  std::pair<int, int> last{-1, -1};
  std::optional<std::size_t> previous;
  while (auto id = scheduler_.take(slot.kinds, previous, index)) {
    const auto t0 = std::chrono::steady_clock::now();
    const Job& job = scheduler_.job(*id);
    const std::pair<int, int> now{job.op, job.impl};
    bool impl_fresh = false;
    if (now != last) {
      std::unique_ptr<Executor> done = std::move(workers.impl);  // ends off the critical path
      auto ready = stock ? stock->take(stocked_impl_key(job.op, job.impl, job.device, slot.ordinal)) : nullptr;
      if (!ready) ready = spare.take(now);
      if (ready) {
        workers.impl = std::move(ready);
        ++stats.started_ahead;
      } else {
        workers.impl = make_executor_();
        workers.impl->set_walls(walls_for(ctx_, ctx_.plans[job.op].impls[job.impl].library.string(), workers.cuda_ordinal));
        impl_fresh = true;
      }
      starts.retire(std::move(done));
      ++stats.worker_starts;
    }
    last = now;
    previous = id;
    if (ctx_.options.isolate && !spare.held())
      if (auto next = scheduler_.next_implementation(slot.kinds, *id, index);
          next && !(stock && stock->holds(stocked_impl_key(scheduler_.job(*next).op, scheduler_.job(*next).impl, scheduler_.job(*next).device, slot.ordinal)))) {
        const Job& n = scheduler_.job(*next);
        auto worker = make_executor_();
        worker->set_walls(walls_for(ctx_, ctx_.plans[n.op].impls[n.impl].library.string(), workers.cuda_ordinal));
        spare.start(std::move(worker), {n.op, n.impl}, warm_request(n.device, slot.ordinal, ctx_.plans[n.op].impls[n.impl].library.string()),
                    ctx_.options.test_timeout);
      }
    const auto& impl_name = ctx_.plans[job.op].impls[job.impl].name;
    trace_line({{"side", slot.name}, {"cmd", "job"}, {"impl", impl_name}, {"tests", job.tests.size()}});
    start_job_workers(job, slot.ordinal, workers, ctx_, impl_fresh);
    run_job(job, slot.ordinal, workers, ctx_, events);
    trace_line({{"side", slot.name}, {"cmd", "job_done"}, {"impl", impl_name}});
    scheduler_.done(*id);
    ++stats.jobs;
    stats.tests += job.tests.size();
    stats.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  spare.take({-1, -1});  // retired, if one is held
  // The run's last moments: nothing is left to ask of the workers, and waiting for the kernel
  // to tear down their device contexts (0.1 s each, one after another) is no part of the answer.
  starts.wait_all_started();
  for (auto* e : {&workers.impl, &workers.reference, &workers.baseline, &workers.checker})
    if (*e) (*e)->abandon();
  starts.settle();  // the ends already under way
  trace_line({{"side", slot.name}, {"cmd", "workers_ended"}});
  std::lock_guard lock(mutex_);
  if (--running_ == 0) events_.close();
}

}  // namespace bb
