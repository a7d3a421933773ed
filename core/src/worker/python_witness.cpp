// A Python implementation's witnessed call (bound_call.hpp). A library writes the outputs it is
// given, so work it launches elsewhere than the given stream shows as outputs changing while that
// stream is held. A Python implementation returns new tensors, copied into the outputs on the
// given stream after the call: that rule sees nothing of work it puts on a stream of its own
// (torch.cuda.Stream(), a Triton launch under another stream, an ExternalStream of its own), and
// such work is never inside the events that time the call. So, for the witnessed call:
//  - its inputs hold poison (0xFF bytes: NaN, -1) until the held stream runs: copies queued on it
//    behind the hold give them their values back, so only work ordered after the hold reads them;
//  - what it returned is copied 2 ms after it returned, the stream still held; if that changes
//    before the stream is let go, work of its own was writing it (`returned_changed_while_held`);
//  - a returned tensor that already held the final result while the stream was held was made off
//    the stream, or is memory of an earlier call holding the same bytes (PyTorch's caching
//    allocator hands blocks back): so the call is made once more, unwitnessed, on the values it
//    was given, the whole device idle before its result is copied; a result made from the poison
//    differs from that one (`made_from_held_inputs`).
#include <cstring>

#include "worker/bound_call.hpp"

namespace bb {

namespace {
constexpr int kPoisonByte = 0xFF;  // NaN in every float type, -1 in every signed integer
}  // namespace

bool BoundCall::hold_inputs() {
  const auto& api = ex_.rt->api();
  for (auto& m : mirrors_) {
    if (m.is_output) continue;
    if (!m.held && api.malloc(&m.held, m.bytes) != 0) {
      m.held = nullptr;
      return false;
    }
    if (api.memcpy_d2d(m.held, m.dev, m.bytes, ex_.stream) != 0) return false;
  }
  for (auto& m : mirrors_) {
    if (m.is_output) continue;
    // The mirror and its snapshot alike: the mirrors' rule compares the two while held.
    if (api.memset(m.dev, kPoisonByte, m.bytes, ex_.stream) != 0 ||
        (m.snapshot && api.memset(m.snapshot, kPoisonByte, m.bytes, ex_.stream) != 0)) {
      unhold_inputs();
      return false;
    }
  }
  if (api.stream_synchronize(ex_.stream) == 0) return true;
  unhold_inputs();
  return false;
}

void BoundCall::unhold_inputs() {
  queue_input_restore();
  ex_.rt->api().stream_synchronize(ex_.stream);
}

bool BoundCall::queue_input_restore() {
  const auto& api = ex_.rt->api();
  bool ok = true;
  for (auto& m : mirrors_)
    if (!m.is_output && m.held) ok = api.memcpy_d2d(m.dev, m.held, m.bytes, ex_.stream) == 0 && ok;
  return ok;
}

void BoundCall::keep_returned() {
  const auto& api = ex_.rt->api();
  const bb_call* call = frame_->call();
  returned_.resize(c_.outputs.size());
  for (auto& r : returned_) r.from = nullptr;
  if (!side_stream_ && api.stream_create(&side_stream_) != 0) {
    side_stream_ = nullptr;
    return;
  }
  for (size_t k = 0; k < c_.outputs.size(); ++k) {
    Returned& r = returned_[k];
    const void* from = python_->returned(static_cast<int32_t>(k));
    const DLTensor& t = call->outputs[k];
    void* to = static_cast<uint8_t*>(t.data) + t.byte_offset;
    const size_t bytes = c_.outputs[k].nbytes();
    if (!from || from == to || bytes == 0) continue;
    if (r.copy && r.bytes != bytes) {
      api.free(r.copy);
      r.copy = nullptr;
    }
    r.bytes = bytes;
    if (!r.copy && api.malloc(&r.copy, bytes) != 0) {
      r.copy = nullptr;
      continue;
    }
    if (api.memcpy_d2d(r.copy, from, bytes, side_stream_) != 0) continue;
    r.from = from;
    r.to = to;
  }
  if (api.stream_synchronize(side_stream_) != 0)
    for (auto& r : returned_) r.from = nullptr;
}

bool BoundCall::returned_changed_while_held() const {
  const auto& api = ex_.rt->api();
  for (const auto& r : returned_) {
    int differ = 0;
    if (r.from && api.bytes_differ(r.from, r.copy, r.bytes, &differ) == 0 && differ) return true;
  }
  return false;
}

bool BoundCall::returned_while_held() {
  const auto& api = ex_.rt->api();
  for (const auto& r : returned_) {
    int differ = 1;
    if (r.from && api.bytes_differ(r.to, r.copy, r.bytes, &differ) == 0 && !differ) return true;
  }
  return false;
}

bool BoundCall::made_from_held_inputs(bb_kernel_fn fn) {
  const auto& api = ex_.rt->api();
  // The witnessed call's result, kept; the inputs' values, the outputs' poison.
  for (const auto& r : returned_)
    if (r.from && api.memcpy_d2d(r.copy, r.to, r.bytes, ex_.stream) != 0) return false;
  if (!queue_input_restore()) return false;
  for (auto& m : mirrors_)
    if (m.is_output && m.poison && api.memcpy_d2d(m.dev, m.poison, m.bytes, ex_.stream) != 0) return false;
  if (api.stream_synchronize(ex_.stream) != 0) return false;
  frame_->clear_error();
  escaped_.clear();
  const int rc = launch(fn);
  api.synchronize();  // its work, wherever it ran, done before what it returned is copied
  const std::string collected = rc == BB_OK ? collect() : "";
  const CallOutcome again = finish_device();
  bool differs = false;
  if (rc == BB_OK && collected.empty() && again.error.empty())
    for (const auto& r : returned_) {
      int differ = 0;
      if (r.from && api.bytes_differ(r.to, r.copy, r.bytes, &differ) == 0 && differ) differs = true;
    }
  // The buffers hold the witnessed call's result again.
  for (const auto& r : returned_)
    if (r.from) api.memcpy_d2d(r.to, r.copy, r.bytes, ex_.stream);
  api.stream_synchronize(ex_.stream);
  return differs;
}

}  // namespace bb
