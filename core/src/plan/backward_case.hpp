// A forward case's backward call (the manifest's `backward:`, manifest.hpp): the case a backward
// kernel (<op>_backward_impl, <op>_backward_reference) is checked and timed on. Its inputs are
// the forward case's tensors (their shapes, dtypes and draws, by a seed of its own: values no
// forward call saw), then grad_<output> for each output (its shape and
// dtype; 0.1 * randn, tritonbench's dy); its outputs grad_<input> for each differentiable input
// (its shape and dtype), within the backward's tolerance for that dtype (the op's where the
// backward gives none). Its id is the forward's with "bwd:" before it, its mode bwd; its bytes
// the least it moves (each tensor read once, each gradient written once).
#pragma once

#include "expected.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"

namespace bb {

// An error names the manifest's `backward:` line and the input whose dtype has no gradient
// (an integer or bool input declared differentiable).
Expected<ConcreteCase> backward_case(const ConcreteCase& forward, const Manifest& m);

// A fwd_bwd case (mode.hpp): the forward, then the backward on the same inputs, in one call. Its
// inputs are the backward case's (the forward's tensors, then grad_<output>, by a seed of its
// own); its outputs the forward's, then the backward's gradients, each within its own tolerance;
// its id the forward's with "fwd_bwd:" before it; its bytes the two passes' together.
ConcreteCase pair_case(const ConcreteCase& forward, const ConcreteCase& backward);

}  // namespace bb
