// The worker's side of fresh inputs for every timed CPU sample (fresh_inputs_protocol.hpp): the
// stage its buffers are laid over, where the host writes each sample's inputs, and the pacing
// that tells the host when.
#pragma once

#include <cstdint>
#include <string>

#include "plan/cases.hpp"
#include "protocol/fresh_inputs_protocol.hpp"
#include "protocol/sealed_blob.hpp"

namespace bb {

class FreshStage {
 public:
  FreshStage() = default;
  ~FreshStage();
  FreshStage(const FreshStage&) = delete;
  FreshStage& operator=(const FreshStage&) = delete;

  // Takes the pacing socket. "" or why not.
  std::string attach(UniqueFd pacing, const ConcreteCase& c);
  // At a block's start: the block's stage, a new memfd the host sent over the pacing socket,
  // mapped beside the last block's (where its buffers lie in memory is each block's draw, as
  // replace_buffers makes it without fresh inputs). "" or why not.
  std::string next_stage();
  // The last block's stage let go, once nothing is laid over it any more.
  void release_previous();
  // Where the call's buffers go (buffers_layout of the case).
  uint8_t* buffers() const { return base_; }

  // Before a timed sample: the host told that the previous one has ended (none before the
  // block's first), and its word awaited that the next inputs are in the buffers. "" or why not.
  std::string next(bool first);
  // A device case's (no stage): as next(), and the sample's seed, which came with the go.
  std::string next_seed(bool first, uint64_t* seed);
  // After the block's last sample: the host told.
  std::string last();

 private:
  std::string tell(char what);

  UniqueFd pacing_;
  uint8_t* base_ = nullptr;      // this block's stage
  uint8_t* previous_ = nullptr;  // the stage the prepared call's buffers may still lie over
  std::size_t bytes_ = 0;
};

}  // namespace bb
