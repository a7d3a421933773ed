#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "host_buffer.hpp"

TEST(HostBuffer, DataIsAlignedAndGuardsStartIntact) {
  bb::HostBuffer b(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % bb::HostBuffer::kAlignment, 0u);
  EXPECT_TRUE(b.guards_intact());
  std::memset(b.data(), 0x11, b.size());  // writing inside is fine
  EXPECT_TRUE(b.guards_intact());
}

TEST(HostBuffer, DetectsWritesPastTheEndAndBefore) {
  bb::HostBuffer b(64);
  b.data()[64 + 2] ^= 0xff;
  EXPECT_FALSE(b.guards_intact());
  EXPECT_EQ(b.overrun().after, 3u);
  EXPECT_EQ(b.overrun().before, 0u);

  bb::HostBuffer c(64);
  c.data()[-1] ^= 0xff;
  c.data()[-5] ^= 0xff;
  EXPECT_EQ(c.overrun().before, 5u);
  EXPECT_EQ(c.overrun().after, 0u);
}

TEST(HostBuffer, PoisonIsRecognisedPerDtype) {
  for (bb::DType t : bb::all_dtypes()) {
    bb::HostBuffer b(8 * bb::dtype_size(t));
    b.poison(t);
    for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(bb::is_poison(t, b.data(), i)) << bb::dtype_name(t);
    bb::store_element(t, b.data(), 3, 1.0);
    EXPECT_FALSE(bb::is_poison(t, b.data(), 3)) << bb::dtype_name(t);
  }
}

#if defined(__linux__)
// The flags of the mapping that holds address p, from /proc/self/smaps ("" when none holds it).
static std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) inside = lo <= a && a < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// A buffer of 2 MB or more starts on a 2 MB page and is advised for transparent huge pages (the
// mapping's "hg" flag): copying a case's inputs into it then takes a page fault per 2 MB.
TEST(HostBuffer, ALargeBufferIsPlacedAndAdvisedForHugePages) {
  {  // Kernels without transparent huge pages refuse the advice (EINVAL): nothing to see then.
    const std::size_t len = std::size_t{4} << 20;
    void* scratch = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(scratch, MAP_FAILED);
    const int refused = madvise(scratch, len, MADV_HUGEPAGE);
    munmap(scratch, len);
    if (refused) GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (no transparent huge pages)";
    if (!std::ifstream("/proc/self/smaps")) GTEST_SKIP() << "no /proc/self/smaps to read the mapping's flags from";
  }
  const std::size_t n = (std::size_t{24} << 20) + 3;
  bb::HostBuffer b(n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw()) % (std::size_t{2} << 20), 0u);
  EXPECT_EQ(b.data() - b.raw(), static_cast<std::ptrdiff_t>(bb::HostBuffer::kGuardBytes));
  EXPECT_EQ(b.size(), n);
  std::memset(b.data(), 0x5a, n);
  EXPECT_TRUE(b.guards_intact());
  b.data()[n] ^= 1;
  EXPECT_EQ(b.overrun().after, 1u);
  const std::string flags = vm_flags_of(b.data() + n / 2);
  ASSERT_FALSE(flags.empty()) << "no mapping in /proc/self/smaps holds the buffer";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;

  bb::HostBuffer small(4096);  // small ones stay on the heap, unadvised
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % bb::HostBuffer::kAlignment, 0u);
}
#endif

// Large buffers are poisoned in parallel by whole units: every element of every size, the units'
// seams and the tail included, holds the pattern, and the guards are left alone.
TEST(HostBuffer, ALargeBufferIsPoisonedEverywhereIncludingItsTail) {
  for (bb::DType t : bb::all_dtypes())
    for (size_t elements : {size_t{1}, size_t{7}, size_t{65536 / 2 + 3}, size_t{(4u << 20) + 5}}) {
      const size_t es = bb::dtype_size(t);
      bb::HostBuffer b(elements * es);
      std::memset(b.data(), 0, b.size());
      b.poison(t);
      size_t wrong = 0;
      for (size_t i = 0; i < elements; ++i) wrong += !bb::is_poison(t, b.data(), i);
      EXPECT_EQ(wrong, 0u) << bb::dtype_name(t) << " x" << elements;
      EXPECT_TRUE(b.guards_intact()) << bb::dtype_name(t) << " x" << elements;
    }
}
