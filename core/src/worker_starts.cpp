#include "worker_starts.hpp"

#include <system_error>

namespace bb {

WorkerStarts::~WorkerStarts() { settle(); }

void WorkerStarts::warm(Executor& worker, nlohmann::json warm, double timeout_seconds) {
  if (!background_ || !worker.launch()) return;
  Executor* w = &worker;
  try {
    starting_.push_back(std::async(std::launch::async, [w, warm = std::move(warm), timeout_seconds] {
      try {
        w->execute(warm, timeout_seconds);
      } catch (...) {  // its first real request says what is wrong with it
      }
    }));
  } catch (const std::system_error&) {  // no thread: the warm request is sent here
    worker.execute(warm, timeout_seconds);
  }
}

void WorkerStarts::wait_started() {
  for (auto& f : starting_)
    if (f.valid()) f.get();
  starting_.clear();
}

void WorkerStarts::retire(std::unique_ptr<Executor> worker) {
  if (!worker) return;
  if (!background_) return worker.reset();
  try {
    ending_.push_back(std::async(std::launch::async, [w = std::shared_ptr<Executor>(std::move(worker))]() mutable { w.reset(); }));
  } catch (const std::system_error&) {  // no thread: the task's capture ended it as it unwound
  }
}

void WorkerStarts::settle() {
  wait_started();
  for (auto& f : ending_)
    if (f.valid()) f.get();
  ending_.clear();
}

}  // namespace bb
