#include <gtest/gtest.h>

#include <cstring>

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
