// The worker's side of fresh inputs for every timed CPU sample (fresh_inputs_protocol.hpp): the
// stage the host writes each sample's inputs to, and the pacing that tells it when.
#pragma once

#include <string>
#include <vector>

#include "fresh_inputs_protocol.hpp"
#include "sealed_blob.hpp"
#include "worker/bound_call.hpp"

namespace bb {

class FreshStage {
 public:
  FreshStage() = default;
  ~FreshStage();
  FreshStage(const FreshStage&) = delete;
  FreshStage& operator=(const FreshStage&) = delete;

  // Takes the pacing socket, receives the stage over it and maps it. "" or why not.
  std::string attach(UniqueFd pacing, const ConcreteCase& c);
  bool attached() const { return base_ != nullptr; }

  // Before a timed sample: the previous sample's buffers on the stage (none before the block's
  // first), the host told, and its word awaited that the next inputs are there. "" or why not.
  std::string next(CallBuffers& previous, bool first);
  // After the block's last sample: its buffers on the stage, the host told.
  std::string last(CallBuffers& b);
  // Where the host wrote the next sample's inputs (one pointer per input).
  std::vector<const uint8_t*> inputs() const;
  // The stage's inputs, evicted with the call's own buffers before a cold sample (else a call
  // could read the host's hot copy rather than its own cold one).
  const uint8_t* inputs_data() const { return base_; }
  std::size_t inputs_bytes() const { return layout_.inputs.total; }

 private:
  void put(CallBuffers& b);
  std::string tell(char what);

  UniqueFd pacing_;
  uint8_t* base_ = nullptr;
  std::size_t mapped_ = 0;
  FreshStageLayout layout_;
};

}  // namespace bb
