#include "context_gate.hpp"

#include <chrono>

namespace bb {

ContextGate& ContextGate::host() {
  static ContextGate gate(1);
  return gate;
}

ContextGate::Pass::Pass(ContextGate& gate, Need need, double max_wait_s) : gate_(gate) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(max_wait_s));
  std::unique_lock lock(gate_.mutex_);
  if (need == Need::now) ++gate_.waiting_now_;
  // Ahead-of-need starts let every waiting job's start go first.
  auto may_enter = [&] { return gate_.free_ > 0 && (need == Need::now || gate_.waiting_now_ == 0); };
  held_ = gate_.changed_.wait_until(lock, deadline, may_enter);
  if (need == Need::now) --gate_.waiting_now_;
  if (held_) --gate_.free_;
  waited_s_ = std::chrono::duration<double>(clock::now() - t0).count();
  if (need == Need::now) gate_.changed_.notify_all();  // one fewer job waiting: starts ahead may go
}

ContextGate::Pass::~Pass() {
  if (!held_) return;
  {
    const std::lock_guard lock(gate_.mutex_);
    ++gate_.free_;
  }
  gate_.changed_.notify_all();
}

}  // namespace bb
