// Host memory for one tensor, with guard bytes on both sides and a poison pattern for outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dtype.hpp"

namespace bb {

// A HostBuffer's memory: freed where it owns it, left to its owner where it is laid over another's.
struct HostBufferFree {
  bool owned = true;
  void operator()(uint8_t* p) const;
};

class HostBuffer {
 public:
  static constexpr std::size_t kGuardBytes = 256;  // a multiple of 64: data stays 64-byte aligned
  static constexpr std::size_t kAlignment = 64;
  // Every buffer starts on a page of its own, so its data sits at the same offset within a page
  // (kGuardBytes) in every process: two workers timing one call read their tensors at the same
  // addresses modulo 4 KiB. With heap placement, the offset between an input and an output
  // differed from process to process, and with it the loads that falsely wait on a store 4 KiB
  // apart: a scale timed against itself read up to 3.4% apart, steady over a whole pairing
  // (docs/PERFORMANCE.md, "Self-speedup across processes").
  static constexpr std::size_t kPage = 4096;

  HostBuffer() = default;
  explicit HostBuffer(std::size_t nbytes);
  // A buffer laid over `place` (kGuardBytes + nbytes + kGuardBytes bytes, page-aligned, owned
  // by another: a stage shared with the host, fresh_inputs_protocol.hpp); its guards written.
  HostBuffer(std::size_t nbytes, uint8_t* place);

  // The whole guarded region (guard, data, guard): what a device mirror copies.
  uint8_t* raw() { return base_.get(); }
  std::size_t raw_size() const { return base_ ? kGuardBytes + nbytes_ + kGuardBytes : 0; }
  bool empty() const { return !base_; }

  uint8_t* data() { return base_.get() + kGuardBytes; }
  const uint8_t* data() const { return base_.get() + kGuardBytes; }
  std::size_t size() const { return nbytes_; }

  // Guards are written on construction; guards_intact() tells whether anything wrote over them.
  bool guards_intact() const;
  // How far writes reached outside the data: bytes past its end and bytes before its start
  // (the furthest clobbered guard byte on each side; 0 when that side is intact).
  struct Overrun {
    std::size_t after = 0;
    std::size_t before = 0;
    bool any() const { return after || before; }
  };
  Overrun overrun() const;

  // Fills every element with the poison pattern of dtype t.
  void poison(DType t);

 private:
  std::unique_ptr<uint8_t[], HostBufferFree> base_;
  std::size_t nbytes_ = 0;
};

// The poison bit pattern of one element of dtype t (signalling NaNs with a payload for floats,
// 0xA5 bytes for integers, 0xA5 for bool, which is neither 0 nor 1).
void poison_element(DType t, void* out);
bool is_poison(DType t, const void* data, std::size_t i);

uint8_t guard_byte(std::size_t i);

// How far writes reached outside a guarded region laid out as a HostBuffer's (`raw` at its first
// guard byte, `nbytes` of data).
HostBuffer::Overrun guard_overrun(const uint8_t* raw, std::size_t nbytes);

}  // namespace bb
