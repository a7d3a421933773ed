// BackendBench-py's --check-backwards, for its folders (generated_manifest.hpp): the backward a
// made manifest gets, as that suite checks one. The loss is the sum of the op's outputs, so the
// gradient of each output is ones; every floating input of a case is differentiable; gradients
// are compared at 1e-2 (absolute and relative); only the correctness cases get a backward call,
// none timed. The reference's backward is autograd's of its forward (docs/PYTHON.md).
#pragma once

#include "plan/manifest.hpp"

namespace bb {

// The backward of a made manifest `m` under --check-backwards.
BackwardSpec check_backwards_spec(const Manifest& m);

}  // namespace bb
