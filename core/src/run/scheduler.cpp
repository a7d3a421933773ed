#include "run/scheduler.hpp"

#include <algorithm>

namespace bb {

Scheduler::Scheduler(std::vector<Job> jobs) : jobs_(std::move(jobs)), state_(jobs_.size(), State::waiting) {}

bool Scheduler::ready(std::size_t id) const {
  return std::all_of(jobs_[id].after.begin(), jobs_[id].after.end(), [&](std::size_t a) { return state_[a] == State::done; });
}

int Scheduler::claimant(std::size_t id) const {
  const auto it = claims_.find({jobs_[id].op, jobs_[id].impl});
  return it == claims_.end() ? -1 : it->second;
}

bool Scheduler::held_elsewhere(std::size_t id, int slot) const {
  for (const auto& [other, impl] : holding_)
    if (other != slot && impl == std::make_pair(jobs_[id].op, jobs_[id].impl)) return true;
  return false;
}

std::optional<std::size_t> Scheduler::take(const std::vector<std::string>& kinds, std::optional<std::size_t> previous, int slot) {
  auto same_impl = [&](const Job& a, const Job& b) {
    return a.op == b.op && a.impl == b.impl;
  };
  std::unique_lock lock(mutex_);
  while (true) {
    if (cancelled_) return std::nullopt;
    bool pending = false;
    // In order of preference: the previous job's implementation (its worker serves it), this
    // worker's claim (its spare starts for it), an implementation no other worker holds or
    // claimed, of the previous job's op first (its reference's and baseline's workers serve
    // it); then a piece of one another worker holds (this worker starts its own: the run's
    // tail, shared out), the first of any. A deferred job only where no other is left.
    auto pick = [&](bool with_deferred) -> std::optional<std::size_t> {
      std::optional<std::size_t> same, claimed, free_same_op, free, unclaimed, any;
      for (std::size_t id = 0; id < jobs_.size(); ++id) {
        if (state_[id] != State::waiting || std::find(kinds.begin(), kinds.end(), jobs_[id].device) == kinds.end()) continue;
        pending = true;
        if (!ready(id)) continue;
        if (previous && same_impl(jobs_[id], jobs_[*previous])) {
          same = id;
          break;
        }
        if (jobs_[id].deferred && !with_deferred) continue;
        const int by = slot >= 0 ? claimant(id) : -1;
        if (by == slot && slot >= 0 && !claimed) claimed = id;
        if (by < 0 && !unclaimed) unclaimed = id;
        if (by < 0 && slot >= 0 && !held_elsewhere(id, slot)) {
          if (!free) free = id;
          if (previous && !free_same_op && jobs_[id].op == jobs_[*previous].op) free_same_op = id;
        }
        if (!any) any = id;
      }
      return same ? same : claimed ? claimed : free_same_op ? free_same_op : free ? free : unclaimed ? unclaimed : any;
    };
    auto first = pick(false);
    if (!first) first = pick(true);
    if (first) {
      state_[*first] = State::running;
      if (slot >= 0) {
        for (auto it = claims_.begin(); it != claims_.end();) it = it->second == slot ? claims_.erase(it) : std::next(it);
        holding_[slot] = {jobs_[*first].op, jobs_[*first].impl};
      }
      return first;
    }
    if (!pending) {
      if (slot >= 0) holding_.erase(slot);
      return std::nullopt;
    }
    changed_.wait(lock);
  }
}

std::optional<std::size_t> Scheduler::next_implementation(const std::vector<std::string>& kinds, std::size_t current, int slot) {
  std::lock_guard lock(mutex_);
  if (cancelled_) return std::nullopt;
  // The job take() will likely give this worker next: of an implementation no other worker
  // claimed or holds, the current job's op first; else any unclaimed one.
  // Deferred jobs as take() has them: only where no other is left.
  std::optional<std::size_t> same_op, free, unclaimed, later_same_op, later_free, later_unclaimed;
  for (std::size_t id = 0; id < jobs_.size(); ++id) {
    if (state_[id] != State::waiting || std::find(kinds.begin(), kinds.end(), jobs_[id].device) == kinds.end()) continue;
    if (jobs_[id].op == jobs_[current].op && jobs_[id].impl == jobs_[current].impl) return std::nullopt;
    const bool open = slot < 0 || claimant(id) < 0 || claimant(id) == slot;
    if (!open) continue;
    auto& u = jobs_[id].deferred ? later_unclaimed : unclaimed;
    auto& f = jobs_[id].deferred ? later_free : free;
    auto& s = jobs_[id].deferred ? later_same_op : same_op;
    if (!u) u = id;
    if (slot >= 0 && held_elsewhere(id, slot)) continue;
    if (!f) f = id;
    if (!s && jobs_[id].op == jobs_[current].op) s = id;
  }
  const auto next = same_op ? same_op : free ? free : unclaimed ? unclaimed : later_same_op ? later_same_op : later_free ? later_free : later_unclaimed;
  if (next && slot >= 0) claims_[{jobs_[*next].op, jobs_[*next].impl}] = slot;
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
