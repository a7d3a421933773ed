#include <gtest/gtest.h>

#include <backendbench/plugin.hpp>

#include <cmath>
#include <limits>

#include "dtype.hpp"

TEST(DType, NamesAndAliasesRoundTrip) {
  for (bb::DType t : bb::all_dtypes()) EXPECT_EQ(bb::parse_dtype(bb::dtype_name(t)), t);
  EXPECT_EQ(bb::parse_dtype("fp16"), bb::DType::float16);
  EXPECT_EQ(bb::parse_dtype("bf16"), bb::DType::bfloat16);
  EXPECT_FALSE(bb::parse_dtype("float8").has_value());
  EXPECT_EQ(bb::all_dtypes().size(), 10u);
}

TEST(DType, DlpackMapping) {
  for (bb::DType t : bb::all_dtypes()) {
    EXPECT_EQ(bb::from_dlpack(bb::to_dlpack(t)), t);
    EXPECT_EQ(bb::to_dlpack(t).bits / 8u, bb::dtype_size(t));
  }
  EXPECT_EQ(bb::to_dlpack(bb::DType::bool_).code, BB_DLPACK_BOOL);
}

TEST(DType, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(bb::float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(bb::float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(bb::float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(bb::float_to_half_bits(70000.0f), 0x7c00);  // overflow to inf
  EXPECT_EQ(bb::float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  // 1 + 2^-11 is halfway between 1 and the next half; ties go to even (1.0).
  EXPECT_EQ(bb::float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(bb::float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(bb::half_bits_to_float(bb::float_to_half_bits(NAN))));
  for (uint32_t h = 0; h < 0x7c00; ++h)  // every finite positive half survives a round trip
    ASSERT_EQ(bb::float_to_half_bits(bb::half_bits_to_float(static_cast<uint16_t>(h))), h);
}

TEST(DType, Bfloat16ConversionRoundsToNearestEven) {
  EXPECT_EQ(bb::float_to_bfloat16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bb::float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(bb::float_to_bfloat16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even
  EXPECT_TRUE(std::isnan(bb::bfloat16_bits_to_float(bb::float_to_bfloat16_bits(NAN))));
}

TEST(DType, StoreSaturatesIntegers) {
  int8_t i8 = 0;
  bb::store_element(bb::DType::int8, &i8, 0, 1000.0);
  EXPECT_EQ(i8, 127);
  uint8_t u8 = 0;
  bb::store_element(bb::DType::uint8, &u8, 0, -5.0);
  EXPECT_EQ(u8, 0);
  uint8_t b = 7;
  bb::store_element(bb::DType::bool_, &b, 0, 0.5);
  EXPECT_EQ(b, 1);
  int64_t big = 0;
  bb::store_element(bb::DType::int64, &big, 0, 1e30);
  EXPECT_EQ(big, std::numeric_limits<int64_t>::max());
}
