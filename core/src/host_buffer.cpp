#include "host_buffer.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "parallel.hpp"

namespace bb {

uint8_t guard_byte(std::size_t i) { return static_cast<uint8_t>((i * 0x9d + 0x5b) & 0xff); }

void HostBufferFree::operator()(uint8_t* p) const {
  if (owned) std::free(p);
}

// From this size up a buffer starts on a 2 MB page and asks the kernel for transparent huge
// pages: its first touch (the copy of a case's inputs into it) then takes one page fault per
// 2 MB instead of one per 4 KB, which on a virtual machine is most of a large copy's time. Its
// size is not rounded up to 2 MB: a tail short of a whole huge page keeps small pages.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

HostBuffer::HostBuffer(std::size_t nbytes) : nbytes_(nbytes) {
  if (nbytes > SIZE_MAX - 2 * kGuardBytes - kPage) throw std::bad_alloc();
  std::size_t total = kGuardBytes + nbytes + kGuardBytes;
  total = (total + kPage - 1) / kPage * kPage;
  uint8_t* p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (total >= kHugePage) {
    void* q = nullptr;
    if (posix_memalign(&q, kHugePage, total) != 0) throw std::bad_alloc();
    p = static_cast<uint8_t*>(q);
    madvise(p, total, MADV_HUGEPAGE);  // a hint: refused or unsupported, nothing changes
  }
#endif
  if (!p) p = static_cast<uint8_t*>(std::aligned_alloc(kPage, total));
  if (!p) throw std::bad_alloc();
  base_.reset(p);
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    p[i] = guard_byte(i);
    p[kGuardBytes + nbytes + i] = guard_byte(i + kGuardBytes);
  }
}

HostBuffer::HostBuffer(std::size_t nbytes, uint8_t* place) : base_(place, HostBufferFree{false}), nbytes_(nbytes) {
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    place[i] = guard_byte(i);
    place[kGuardBytes + nbytes + i] = guard_byte(i + kGuardBytes);
  }
}

HostBuffer::Overrun HostBuffer::overrun() const { return base_ ? guard_overrun(base_.get(), nbytes_) : Overrun{}; }

HostBuffer::Overrun guard_overrun(const uint8_t* p, std::size_t nbytes_) {
  constexpr std::size_t kGuardBytes = HostBuffer::kGuardBytes;
  HostBuffer::Overrun o;
  for (std::size_t i = kGuardBytes; i-- > 0;)
    if (p[kGuardBytes + nbytes_ + i] != guard_byte(i + kGuardBytes)) {
      o.after = i + 1;
      break;
    }
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (p[i] != guard_byte(i)) {
      o.before = kGuardBytes - i;
      break;
    }
  return o;
}

bool HostBuffer::guards_intact() const { return !overrun().any(); }

void poison_element(DType t, void* out) {
  switch (t) {
    case DType::float32: { uint32_t v = 0x7fa5a5a5u; std::memcpy(out, &v, 4); return; }
    case DType::float64: { uint64_t v = 0x7ff4a5a5a5a5a5a5ull; std::memcpy(out, &v, 8); return; }
    case DType::float16: { uint16_t v = 0x7d5au; std::memcpy(out, &v, 2); return; }
    case DType::bfloat16: { uint16_t v = 0x7fa5u; std::memcpy(out, &v, 2); return; }
    default: std::memset(out, 0xa5, dtype_size(t)); return;
  }
}

bool is_poison(DType t, const void* data, std::size_t i) {
  uint8_t p[8];
  poison_element(t, p);
  const std::size_t n = dtype_size(t);
  return std::memcmp(static_cast<const uint8_t*>(data) + i * n, p, n) == 0;
}

void HostBuffer::poison(DType t) {
  const std::size_t n = dtype_size(t);
  uint8_t p[8];
  poison_element(t, p);
  uint8_t* d = data();
  // A unit of whole elements (every element size divides it), copied in parallel: a 64M-element
  // output was poisoned element by element on one core in 0.2 s before every timed block.
  constexpr std::size_t kUnit = 64 * 1024;
  std::size_t pattern_bytes = std::min(kUnit, nbytes_);
  pattern_bytes -= pattern_bytes % n;
  for (std::size_t off = 0; off < pattern_bytes; off += n) std::memcpy(d + off, p, n);
  if (pattern_bytes < kUnit) return;  // it was all of it
  const std::size_t units = nbytes_ / kUnit;
  for_each_chunk(units, chunk_count(units, 256), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t u = std::max<std::size_t>(lo, 1); u < hi; ++u) std::memcpy(d + u * kUnit, d, kUnit);
  });
  const std::size_t tail = nbytes_ - units * kUnit;  // whole elements too: kUnit and nbytes_ are multiples of n
  std::memcpy(d + units * kUnit, d, tail);
}

}  // namespace bb
