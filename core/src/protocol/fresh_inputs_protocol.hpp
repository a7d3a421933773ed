// Fresh inputs for every timed CPU sample (issue 39 item 1; docs/RELIABILITY.md): what the host
// (fresh_inputs.hpp) and a worker (worker/fresh_stage.hpp) agree on.
//
// A prepared call that times with fresh inputs gets, once, a pacing socket (SOCK_SEQPACKET, the
// request "pace" carries it) and over it a memfd, the stage, that both map: the call's buffers
// themselves, laid out as buffers_layout(c) (each input and output between its guards). For each
// block the worker lays its buffers over the stage (the case's inputs in them, for the warm-up).
// Before each timed sample it says so: kReady before the first, kDone after each; the host then
// holds, for a sample it picked in secret, the buffers the call left, writes the next sample's
// inputs over the inputs, made from a seed drawn for that sample alone, and sends kGo; the
// worker poisons its outputs, evicts the buffers from the caches and the sample runs. After the
// block's last sample: kLast. No copy either way: no sample's inputs exist before the previous
// sample has ended, and nothing but the host's word says when it may begin.
//
// A device case (its inputs made on the device, its buffers mapped by the checker:
// device_check.hpp) has no stage: the go carries the sample's seed (kGo and 8 bytes, one
// packet), and the worker makes the sample's inputs on its device from it (input `name` from
// fresh_input_seed(seed, name), worker_protocol.hpp, by the runtime's fill_fresh, which the
// reference's worker uses too for the kept sample) before the sample's eviction. The host keeps a sample in secret by having the checker copy
// the implementation's buffers before it sends the next go.
#pragma once

#include <cstddef>

namespace bb {

inline constexpr char kFreshReady = 'r', kFreshDone = 'd', kFreshLast = 'l', kFreshGo = 'g';
inline constexpr std::size_t kFreshSeedGoBytes = 9;  // a device case's go: kFreshGo, then the seed (host byte order)

}  // namespace bb
