// A CPU pairing's one CPU (cpu_pin.hpp): the implementation's worker and the baseline's, timed
// in turn, both pinned to one core claimed for the pairing, so that neither side's blocks run on
// a core the other's did not. The first pair of blocks runs where the scheduler puts it and shows
// whether either side uses more than one core; from the second on, both are pinned before every
// block while each runs one thread per process (a thread started since inherits the pin). A side
// that runs threads, or that moved itself off the CPU, ends the pinning of both, for the rest of
// the pairing, and the timing's notes say why where it was the second.
#pragma once

#include <string>

#include "measure/cpu_pin.hpp"

namespace bb {

class CpuPairing {
 public:
  CpuPairing() = default;
  CpuPairing(const CpuPairing&) = delete;
  CpuPairing& operator=(const CpuPairing&) = delete;
  ~CpuPairing();  // the CPU released (end() unpins)

  // Claims the CPU the host runs on now (where the scheduler has just put it); with none left to
  // claim, nothing is pinned.
  void begin();
  // Before a block: both sides' tasks pinned where they may be. `blocks_done`: whether each side
  // has had its first block (its load measured, note_first_load).
  void before_block(const WorkerTasks& impl, const WorkerTasks& baseline, bool blocks_done, std::size_t impl_blocks);
  // A side's first block, unpinned: the cores it kept busy (its processes' CPU seconds over the
  // block's seconds). Over 1.5: it runs threads, and neither side is pinned.
  bool measuring_first_load(bool first_block_of_side) const { return state_ == State::undecided && first_block_of_side; }
  void note_first_load(bool baseline, double cores) { first_load_[baseline ? 1 : 0] = cores; }
  // The CPU for the host's own threads that serve a block (fresh inputs' pacing), -1: any.
  int cpu_for_block() const { return state_ == State::pinned ? cpu_ : -1; }
  bool pinned() const { return state_ == State::pinned; }
  bool active() const { return state_ != State::free; }  // pinned, or deciding at its first pair
  // Both sides (their tasks now) back on every CPU, the CPU released: the CPU the pairing ended
  // pinned to (-1: none). `baseline` may be null (no baseline's worker).
  int end(const WorkerTasks& impl, const WorkerTasks* baseline);
  const std::string& note() const { return note_; }

 private:
  enum class State { undecided, pinned, free };
  static constexpr double kThreadedLoad = 1.5;
  void unpin(const WorkerTasks& impl, const WorkerTasks* baseline, const std::string& why);

  State state_ = State::free;
  int cpu_ = -1;
  double first_load_[2] = {0, 0};  // impl, baseline
  std::string note_;
};

}  // namespace bb
