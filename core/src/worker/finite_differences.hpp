// Gradients by central finite differences of the reference's forward, where an op declares a
// backward and no library gives <op>_backward_reference (docs/MANIFEST.md, "Backward"): the
// reference of a bwd test is then this, called as a backward is (the forward's inputs, then
// grad_<output> of each output; it writes grad_<input> of each differentiable input). Each
// element of a differentiable input is moved by +-h in double precision and the forward run
// twice: grad_x[j] = sum over outputs and their elements of grad_out * (out(x + h e_j) -
// out(x - h e_j)) / 2h, h = 1e-5 * max(1, |x_j|). The forward must take float64 (the shipped
// references do); the tensors are on the CPU. 2 * numel forward calls: small cases only (the
// plan's choice: plan.cpp, kDifferencesLimit).
#pragma once

#include <string>

#include <backendbench/plugin.h>

namespace bb {

// The forward that `op`'s differences call (set when the worker resolves the target; one
// reference per op).
void set_differences_forward(const std::string& op, bb_kernel_fn forward);

// A bb_kernel_fn: the call's gradients by differences of its op's forward.
extern "C" int backward_by_differences(const bb_call* call);

}  // namespace bb
