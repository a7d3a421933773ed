#include "spare_worker.hpp"

namespace bb {

SpareWorker::~SpareWorker() { retire(); }

void SpareWorker::start(std::unique_ptr<Executor> worker, std::pair<int, int> target, nlohmann::json warm, double timeout_seconds) {
  retire();
  worker_ = std::move(worker);
  target_ = target;
  Executor* w = worker_.get();
  w->launch();  // here: the process must not die with the thread below (executor.hpp)
  started_ = std::async(std::launch::async, [w, warm = std::move(warm), timeout_seconds] { w->execute(warm, timeout_seconds); });
}

void SpareWorker::settle() {
  if (started_.valid()) started_.get();
}

std::unique_ptr<Executor> SpareWorker::take(std::pair<int, int> target) {
  if (!worker_) return nullptr;
  settle();
  if (target != target_) {
    retire();
    return nullptr;
  }
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
