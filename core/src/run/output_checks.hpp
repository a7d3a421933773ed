// The host's judgement of one call, from the buffers its worker sent back (inputs, then
// outputs, each whole with its guard bytes: worker_protocol.hpp): writes outside the tensors,
// inputs it changed, and its outputs against the reference's. The implementation's process
// never sees the reference's outputs, and nothing it says about its own call is believed.
#pragma once

#include <optional>
#include <string>

#include "plan/cases.hpp"
#include "protocol/sealed_blob.hpp"
#include "results.hpp"

namespace bb {

// A call's buffers as the worker sent them.
class CallBuffersView {
 public:
  CallBuffersView(const ConcreteCase& c, const SealedBlob& blob);
  const uint8_t* input(std::size_t i) const;   // data of input i
  const uint8_t* output(std::size_t j) const;  // data of output j (its input's for an in-place one)
  const uint8_t* raw_input(std::size_t i) const;
  const uint8_t* raw_output(std::size_t j) const;  // nullptr for an in-place output

 private:
  const ConcreteCase& c_;
  const SealedBlob& blob_;
  std::vector<std::size_t> offsets_;
};

struct Judgement {
  Verdict verdict = Verdict::fail;
  std::string message;
  std::optional<Mismatch> mismatch;
};

// Writes outside the tensors (OUT_OF_BOUNDS), inputs that are not in-place targets changed
// against `inputs` (the case's inputs blob: INPUT_MUTATED), then every output against the
// reference's (`expected`, a buffers blob): UNWRITTEN or FAIL. nullopt: the call is right.
// `figures`, where given: how close the outputs compared came (every output on a pass).
std::optional<Judgement> judge_call(const ConcreteCase& c, const CallBuffersView& got, const SealedBlob& inputs,
                                    const CallBuffersView& expected, ErrorFigures* figures = nullptr);

// Whether outputs of zeros would pass against `expected`, every output (allclose.hpp's
// zeros_would_pass): the case cannot tell an implementation that writes zeros from a right one.
bool zeros_would_pass_all(const ConcreteCase& c, const CallBuffersView& expected);

// Outputs only, in one line: "" when they agree with the reference's.
std::string outputs_differ(const ConcreteCase& c, const CallBuffersView& got, const CallBuffersView& expected);

// The reference left some output unwritten (still poisoned): what it left, or "".
std::string reference_unwritten(const ConcreteCase& c, const CallBuffersView& expected);

// Byte-for-byte: "" when two calls' outputs are identical, else which output and how many
// elements differ.
std::string outputs_not_identical(const ConcreteCase& c, const CallBuffersView& a, const CallBuffersView& b);

std::string format_value(double v);

}  // namespace bb
