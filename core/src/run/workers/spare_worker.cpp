#include "run/workers/spare_worker.hpp"
#include "run/workers/worker_starts.hpp"

#include <system_error>

namespace bb {

SpareWorker::~SpareWorker() { retire(); }

void SpareWorker::start(std::unique_ptr<Executor> worker, std::pair<int, int> target, nlohmann::json warm, double timeout_seconds) {
  retire();
  worker_ = std::move(worker);
  target_ = target;
  Executor* w = worker_.get();
  // Here: the process must not die with the thread below (executor.hpp). A worker that could not
  // start, or a thread that could not, leaves no spare: the switch starts a worker as before.
  if (!w->launch()) return retire();
  try {
    started_ = std::async(std::launch::async, [w, warm = std::move(warm), timeout_seconds] { return send_warm(*w, warm, timeout_seconds, "warm_spare"); });
  } catch (const std::system_error&) {
    retire();
  }
}

void SpareWorker::settle() {
  if (started_.valid()) warm_ok_ = started_.get();
}

std::unique_ptr<Executor> SpareWorker::take(std::pair<int, int> target) {
  if (!worker_) return nullptr;
  settle();
  if (target != target_ || !warm_ok_) {
    retire();
    return nullptr;
  }
  target_ = {-1, -1};
  return std::move(worker_);
}

std::unique_ptr<Executor> SpareWorker::release() {
  settle();
  target_ = {-1, -1};
  return std::move(worker_);
}

void SpareWorker::retire() {
  settle();
  if (worker_) worker_->recycle();
  worker_.reset();
  target_ = {-1, -1};
}

}  // namespace bb
