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

}  // namespace bb
