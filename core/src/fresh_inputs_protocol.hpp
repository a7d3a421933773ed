// Fresh inputs for every timed CPU sample (issue 39 item 1; docs/RELIABILITY.md): what the host
// (fresh_inputs.hpp) and a worker (worker/fresh_stage.hpp) agree on.
//
// A session that times with fresh inputs gets, once, a pacing socket (SOCK_SEQPACKET, the
// request "pace" carries it) and over it a memfd, the stage, that both map:
//   [the next sample's inputs, inputs_layout] [the buffers after the last sample, buffers_layout]
// Before each timed sample the worker writes the previous sample's buffers (inputs, outputs and
// their guards) to the stage and sends kDone (kReady before the first); the host, once it has
// them, writes the next sample's inputs, made from a seed it draws for that sample alone, and
// sends kGo; the worker copies them into its buffers and the sample runs. After the block's last
// sample: its buffers, then kLast. So no sample's inputs exist before the previous sample has
// ended, and the host holds, for any sample it picks in secret, the inputs and what the call made
// of them.
#pragma once

#include <cstddef>

#include "cases.hpp"
#include "worker_protocol.hpp"

namespace bb {

inline constexpr char kFreshReady = 'r', kFreshDone = 'd', kFreshLast = 'l', kFreshGo = 'g';

struct FreshStageLayout {
  BlobLayout inputs;   // at offset 0
  BlobLayout buffers;  // at buffers_at
  std::size_t buffers_at = 0;
  std::size_t total = 0;
};
inline FreshStageLayout fresh_stage_layout(const ConcreteCase& c) {
  FreshStageLayout l{inputs_layout(c), buffers_layout(c), 0, 0};
  constexpr std::size_t kPage = 4096;
  l.buffers_at = (l.inputs.total + kPage - 1) / kPage * kPage;
  l.total = l.buffers_at + l.buffers.total;
  return l;
}

}  // namespace bb
