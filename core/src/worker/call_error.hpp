// The error a worker-made bb_kernel_fn (finite differences, a fwd_bwd pair) returns: the message
// into the call's error buffer, cut to fit, and BB_ERR_GENERIC.
#pragma once

#include <algorithm>
#include <cstring>
#include <string_view>

#include <backendbench/plugin.h>

namespace bb {

inline int call_error(const bb_call* call, std::string_view message) {
  if (call->error && call->error_capacity > 0) {
    const std::size_t n = std::min(message.size(), call->error_capacity - 1);
    std::memcpy(call->error, message.data(), n);
    call->error[n] = '\0';
  }
  return BB_ERR_GENERIC;
}

}  // namespace bb
