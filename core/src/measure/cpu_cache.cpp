#include "measure/cpu_cache.hpp"

#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define BB_EVICT_X86 1
#endif

namespace bb {

namespace {
constexpr std::size_t kLine = 64;  // x86-64 and most AArch64 cores; dc civac acts on the CTR's line

#if defined(BB_EVICT_X86)
bool has_clflushopt() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & (1u << 23)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.CLFLUSHOPT[bit 23]
  }();
  return has;
}

__attribute__((target("clflushopt"))) void flush_opt(std::uintptr_t begin, std::uintptr_t end) {
  for (std::uintptr_t p = begin; p < end; p += kLine) _mm_clflushopt(reinterpret_cast<void*>(p));
  _mm_mfence();  // clflushopt is ordered by fences only: every line is out before the call
}

void flush(std::uintptr_t begin, std::uintptr_t end) {
  for (std::uintptr_t p = begin; p < end; p += kLine) _mm_clflush(reinterpret_cast<const void*>(p));
  _mm_mfence();
}
#endif

#if !defined(BB_EVICT_X86) && !defined(__aarch64__)
// Elsewhere: read (and so displace) a buffer far larger than any last-level cache.
void displace_caches() {
  static std::vector<unsigned char> big(256u << 20, 1);
  volatile unsigned sink = 0;
  unsigned acc = 0;
  for (std::size_t i = 0; i < big.size(); i += kLine) acc += big[i];
  sink = acc;
  (void)sink;
}
#endif
}  // namespace

const char* evict_instruction() {
#if defined(BB_EVICT_X86)
  return has_clflushopt() ? "clflushopt" : "clflush";
#elif defined(__aarch64__)
  return "dc civac";
#else
  return "displace";
#endif
}

void evict_from_cpu_caches(const void* data, std::size_t bytes, EvictWith with) {
  if (!data || bytes == 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data) & ~(std::uintptr_t{kLine} - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
#if defined(BB_EVICT_X86)
  if (with != EvictWith::clflush && has_clflushopt())
    flush_opt(begin, end);
  else
    flush(begin, end);
#elif defined(__aarch64__)
  (void)with;
  for (std::uintptr_t p = begin; p < end; p += kLine) asm volatile("dc civac, %0" : : "r"(p) : "memory");
  asm volatile("dsb ish" : : : "memory");
#else
  (void)with;
  (void)begin;
  (void)end;
  displace_caches();
#endif
}

}  // namespace bb
