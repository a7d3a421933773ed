// A fwd_bwd test's call (plan/mode.hpp): the forward, then the backward on the same inputs, as
// one bb_call the worker checks and times whole. The call's inputs are the forward's, then the
// gradient of each of its outputs (grad_<output>); its outputs are the forward's, then the
// gradient of each differentiable input (grad_<input>). The forward sub-call reads the forward's
// inputs and writes the forward's outputs; the backward sub-call reads every input and writes
// the gradients. Each bound pair is a plain bb_kernel_fn (one of a fixed set of slots), so the
// worker calls, guards and times it as it does any other.
#pragma once

#include <backendbench/plugin.h>

#include "expected.hpp"

namespace bb {

// The bb_kernel_fn that calls `forward` then `backward` (the same pair is bound once).
Expected<bb_kernel_fn> bind_pass_pair(bb_kernel_fn forward, bb_kernel_fn backward);

}  // namespace bb
