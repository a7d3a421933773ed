#include "measure/cpu_pairing.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace bb {

CpuPairing::~CpuPairing() {
  if (cpu_ >= 0) release_cpu(cpu_);
}

void CpuPairing::begin() {
  cpu_ = claim_cpu(current_cpu());
  state_ = cpu_ >= 0 ? State::undecided : State::free;
  first_load_[0] = first_load_[1] = 0;
}

void CpuPairing::before_block(const WorkerTasks& impl, const WorkerTasks& baseline, bool blocks_done, std::size_t impl_blocks) {
  if (state_ == State::free) return;
  if (state_ == State::undecided && !blocks_done) return;
  if (state_ == State::undecided && std::max(first_load_[0], first_load_[1]) > kThreadedLoad) return unpin(impl, &baseline, "");
  if (state_ == State::pinned && !(pinned_to(impl.threads, cpu_) && pinned_to(baseline.threads, cpu_)))
    return unpin(impl, &baseline,
                 fmt::format("not pinned to CPU {} after block {}: a side changed its CPU affinity while timed, so both ran on every CPU from then on",
                             cpu_, impl_blocks));
  if (!impl.single_threaded() || !baseline.single_threaded()) return unpin(impl, &baseline, "");
  state_ = State::pinned;  // from here on, a failure unpins whatever was pinned
  if (!pin_threads(impl.threads, cpu_) || !pin_threads(baseline.threads, cpu_)) return unpin(impl, &baseline, "");
}

void CpuPairing::unpin(const WorkerTasks& impl, const WorkerTasks* baseline, const std::string& why) {
  if (state_ == State::pinned) {
    pin_threads(impl.threads, -1);
    if (baseline) pin_threads(baseline->threads, -1);
  }
  if (!why.empty()) note_ = why;
  state_ = State::free;
}

int CpuPairing::end(const WorkerTasks& impl, const WorkerTasks* baseline) {
  const int ended_on = state_ == State::pinned ? cpu_ : -1;
  unpin(impl, baseline, "");
  if (cpu_ >= 0) release_cpu(cpu_);
  cpu_ = -1;
  return ended_on;
}

}  // namespace bb
