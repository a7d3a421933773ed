// The roofline bound of a case, with controlled peaks: which bound applies, how close the time
// came, which compute peak a dtype is held to (the peaks are read in device_kind_test.cpp).
#include <gtest/gtest.h>

#include "measure/roofline.hpp"

TEST(Roofline, TheSlowerOfComputeAndMemorySetsTheBound) {
  // 1 GFLOP and 1 GB on a 100 TFLOP/s, 1000 GB/s device: compute 10 us, memory 1 ms.
  auto r = bb::roofline(1e9, 1e9, 2e-3, 1000, 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "memory");
  EXPECT_NEAR(r->pct, 50.0, 1e-9);  // 1 ms of 2 ms
  // 1 TFLOP and 1 GB: compute 10 ms, memory 1 ms.
  r = bb::roofline(1e12, 1e9, 10e-3, 1000, 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "compute");
  EXPECT_NEAR(r->pct, 100.0, 1e-9);
  // No bytes declared: the compute bound alone.
  r = bb::roofline(1e12, std::nullopt, 20e-3, 1000, 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "compute");
  EXPECT_NEAR(r->pct, 50.0, 1e-9);
}

TEST(Roofline, NothingWithoutFlopsAComputePeakOrATime) {
  EXPECT_FALSE(bb::roofline(std::nullopt, 1e9, 1e-3, 1000, 100));
  EXPECT_FALSE(bb::roofline(0.0, 1e9, 1e-3, 1000, 100));
  EXPECT_FALSE(bb::roofline(1e9, 1e9, 1e-3, 1000, 0));  // the device's compute peak is unknown
  EXPECT_FALSE(bb::roofline(1e9, 1e9, 0, 1000, 100));
}

TEST(Roofline, HalfPrecisionIsHeldToTheTensorPeak) {
  EXPECT_EQ(bb::compute_kind_for(bb::DType::float32), "fp32");
  EXPECT_EQ(bb::compute_kind_for(bb::DType::float16), "fp16 tensor");
  EXPECT_EQ(bb::compute_kind_for(bb::DType::bfloat16), "bf16 tensor");
  EXPECT_EQ(bb::compute_kind_for(bb::DType::float64), "fp32");
}
