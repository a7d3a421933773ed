#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compare.hpp"
#include "host_buffer.hpp"
#include "tolerance.hpp"

namespace {
bb::Comparison cmp(std::vector<float> a, std::vector<float> e, bb::Tolerance tol) {
  return bb::compare(bb::DType::float32, a.data(), e.data(), a.size(), tol);
}
}  // namespace

TEST(Compare, AllcloseSemantics) {
  const bb::Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(cmp({1.0f, 100.0f}, {1.0f, 100.09f}, tol).passed());
  auto c = cmp({1.0f, 100.0f, 3.0f}, {1.0f, 100.2f, 3.1f}, tol);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_mismatch, 1);
  EXPECT_NEAR(c.max_abs_error, 0.2, 1e-4);
  EXPECT_NEAR(c.max_rel_error, 0.1 / 3.1, 1e-4);
  EXPECT_FLOAT_EQ(static_cast<float>(c.actual_at_first), 100.0f);
}

TEST(Compare, NanAndInfPositionsMustMatch) {
  const bb::Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(cmp({NAN, INFINITY, -INFINITY}, {NAN, INFINITY, -INFINITY}, tol).passed());
  EXPECT_EQ(cmp({NAN, 1.0f}, {0.0f, 1.0f}, tol).mismatches, 1);
  EXPECT_EQ(cmp({0.0f}, {NAN}, tol).mismatches, 1);
  EXPECT_EQ(cmp({INFINITY}, {-INFINITY}, tol).mismatches, 1);
  EXPECT_EQ(cmp({1e30f}, {INFINITY}, tol).mismatches, 1);
}

TEST(Compare, PoisonedElementsAreUnwritten) {
  bb::HostBuffer out(4 * sizeof(float));
  out.poison(bb::DType::float32);
  auto* o = reinterpret_cast<float*>(out.data());
  o[0] = 1.0f;
  o[1] = 2.0f;
  std::vector<float> expected{1.0f, 2.0f, 3.0f, 4.0f};
  auto c = bb::compare(bb::DType::float32, out.data(), expected.data(), 4, {1e-5, 1e-5});
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.unwritten, 2);
  EXPECT_EQ(c.first_mismatch, 2);
}

TEST(Compare, IntegersAreExactByDefault) {
  std::vector<int32_t> a{1, 2, 3}, e{1, 2, 4};
  const auto tol = bb::default_tolerance(bb::DType::int32);
  EXPECT_EQ(tol.atol, 0.0);
  EXPECT_EQ(bb::compare(bb::DType::int32, a.data(), e.data(), 3, tol).mismatches, 1);
  std::vector<int64_t> big_a{(int64_t{1} << 60) + 1}, big_e{int64_t{1} << 60};  // equal as doubles
  EXPECT_EQ(bb::compare(bb::DType::int64, big_a.data(), big_e.data(), 1, tol).mismatches, 1);
}

TEST(Compare, DefaultTolerancesFollowTorch) {
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float32).rtol, 1.3e-6);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float16).rtol, 1e-3);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::bfloat16).rtol, 1.6e-2);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float64).atol, 1e-7);
  bb::ToleranceTable op{{bb::DType::float32, {1e-3, 1e-3}}}, c{{bb::DType::float32, {1e-1, 0}}};
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float32, op, {}).atol, 1e-3);
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float32, op, c).atol, 1e-1);
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float16, op, c).rtol, 1e-3);
}

TEST(Compare, IndexFormatting) {
  EXPECT_EQ(bb::format_index(0, {4, 5}), "[0, 0]");
  EXPECT_EQ(bb::format_index(13, {4, 5}), "[2, 3]");
  EXPECT_EQ(bb::format_index(5, {6}), "[5]");
}
