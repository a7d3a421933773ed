#include "worker/pass_pair.hpp"

#include "worker/call_error.hpp"

#include <array>
#include <mutex>
#include <string_view>
#include <utility>

namespace bb {

namespace {

constexpr int kSlots = 16;  // pairs one worker binds: an implementation's, its reference's, a baseline's
struct Pair {
  bb_kernel_fn forward = nullptr, backward = nullptr;
};
std::array<Pair, kSlots> g_pairs;
int g_used = 0;
std::mutex g_mutex;

int call_pair(int slot, const bb_call* call) {
  const Pair p = g_pairs[static_cast<std::size_t>(slot)];
  // The forward's inputs lead; the gradients of its outputs (grad_*) trail, one per output.
  int forward_inputs = call->num_inputs;
  while (forward_inputs > 0 && call->input_names && std::string_view(call->input_names[forward_inputs - 1]).rfind("grad_", 0) == 0)
    --forward_inputs;
  const int forward_outputs = call->num_inputs - forward_inputs;
  if (forward_outputs <= 0 || forward_outputs > call->num_outputs)
    return call_error(call, "a fwd_bwd call without the gradients of the forward's outputs (inputs named grad_<output>)");
  bb_call forward = *call;
  forward.num_inputs = forward_inputs;
  forward.num_outputs = forward_outputs;
  if (const int rc = p.forward(&forward); rc != BB_OK) return rc;
  bb_call backward = *call;
  backward.num_outputs = call->num_outputs - forward_outputs;
  backward.outputs = call->outputs + forward_outputs;
  backward.output_names = call->output_names ? call->output_names + forward_outputs : nullptr;
  return p.backward(&backward);
}

template <int K>
int trampoline(const bb_call* call) {
  return call_pair(K, call);
}
template <std::size_t... K>
constexpr std::array<bb_kernel_fn, kSlots> trampolines(std::index_sequence<K...>) {
  return {trampoline<static_cast<int>(K)>...};
}
constexpr std::array<bb_kernel_fn, kSlots> kFns = trampolines(std::make_index_sequence<kSlots>());

}  // namespace

Expected<bb_kernel_fn> bind_pass_pair(bb_kernel_fn forward, bb_kernel_fn backward) {
  if (!forward || !backward) return make_error("a fwd_bwd call needs both the forward and the backward");
  std::lock_guard lock(g_mutex);
  for (int k = 0; k < g_used; ++k)
    if (g_pairs[static_cast<std::size_t>(k)].forward == forward && g_pairs[static_cast<std::size_t>(k)].backward == backward)
      return kFns[static_cast<std::size_t>(k)];
  if (g_used == kSlots) return make_error("too many fwd_bwd pairs bound in one worker");
  g_pairs[static_cast<std::size_t>(g_used)] = {forward, backward};
  return kFns[static_cast<std::size_t>(g_used++)];
}

}  // namespace bb
