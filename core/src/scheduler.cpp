#include "scheduler.hpp"

#include <algorithm>

namespace bb {

Scheduler::Scheduler(std::vector<Job> jobs) : jobs_(std::move(jobs)), state_(jobs_.size(), State::waiting) {}

bool Scheduler::ready(std::size_t id) const {
  return std::all_of(jobs_[id].after.begin(), jobs_[id].after.end(), [&](std::size_t a) { return state_[a] == State::done; });
}

std::optional<std::size_t> Scheduler::take(const std::vector<std::string>& kinds, std::optional<std::size_t> previous) {
  auto same_impl = [&](const Job& a, const Job& b) {
    return a.op == b.op && a.impl == b.impl;
  };
  std::unique_lock lock(mutex_);
  while (true) {
    if (cancelled_) return std::nullopt;
    bool pending = false;
    std::optional<std::size_t> first;
    for (std::size_t id = 0; id < jobs_.size(); ++id) {
      if (state_[id] != State::waiting || std::find(kinds.begin(), kinds.end(), jobs_[id].device) == kinds.end()) continue;
      pending = true;
      if (!ready(id)) continue;
      if (previous && same_impl(jobs_[id], jobs_[*previous])) {
        first = id;
        break;
      }
      if (!first) first = id;
    }
    if (first) {
      state_[*first] = State::running;
      return first;
    }
    if (!pending) return std::nullopt;
    changed_.wait(lock);
  }
}

std::optional<std::size_t> Scheduler::next_implementation(const std::vector<std::string>& kinds, std::size_t current) {
  std::lock_guard lock(mutex_);
  if (cancelled_) return std::nullopt;
  std::optional<std::size_t> next;
  for (std::size_t id = 0; id < jobs_.size(); ++id) {
    if (state_[id] != State::waiting || std::find(kinds.begin(), kinds.end(), jobs_[id].device) == kinds.end()) continue;
    if (jobs_[id].op == jobs_[current].op && jobs_[id].impl == jobs_[current].impl) return std::nullopt;
    if (!next) next = id;
  }
  return next;
}

void Scheduler::done(std::size_t id) {
  {
    std::lock_guard lock(mutex_);
    state_[id] = State::done;
  }
  changed_.notify_all();
}

void Scheduler::cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  changed_.notify_all();
}

}  // namespace bb
