// fresh_inputs.hpp's fill_fresh: the values every timed CPU sample gets (their distribution, their
// determinism, every element new for another seed).
#include "run/fresh_inputs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "dtype.hpp"

namespace {

bb::ConcreteTensor tensor(bb::InitKind kind, double a, double b, int64_t n, bb::DType dtype = bb::DType::float32) {
  bb::ConcreteTensor t;
  t.name = "x";
  t.shape = {n};
  t.dtype = dtype;
  t.init.kind = kind;
  t.init.a = a;
  t.init.b = b;
  return t;
}

std::vector<double> values(const bb::ConcreteTensor& t, uint64_t seed) {
  std::vector<uint8_t> data(t.nbytes());
  EXPECT_TRUE(bb::fill_fresh(t, data.data(), seed));
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = bb::load_element(t.dtype, data.data(), i);
  return v;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

// The manifest's distributions, whatever the split across threads (odd sizes, a pair across a
// chunk's edge), the same values for the same seed, and every element new for another seed.
TEST(FillFresh, GivesTheInitialisersDistributionAndNewValuesForEverySeed) {
  const int64_t n = (1 << 20) + 3;
  const auto z = values(tensor(bb::InitKind::randn, 0.5, 2.0, n), 7);
  EXPECT_NEAR(mean(z), 0.5, 0.01);
  EXPECT_NEAR(stddev(z), 2.0, 0.01);
  std::size_t beyond3 = 0;  // the tails: 0.27% of a normal lies beyond 3 sigma
  for (double x : z) beyond3 += std::abs(x - 0.5) > 6.0;
  EXPECT_NEAR(static_cast<double>(beyond3) / static_cast<double>(n), 0.0027, 0.0005);
  EXPECT_EQ(values(tensor(bb::InitKind::randn, 0.5, 2.0, n), 7), z);

  const auto u = values(tensor(bb::InitKind::uniform, -1.0, 3.0, n), 7);
  EXPECT_NEAR(mean(u), 1.0, 0.01);
  EXPECT_NEAR(stddev(u), 4.0 / std::sqrt(12.0), 0.01);
  for (double x : u) ASSERT_TRUE(x >= -1.0 && x < 3.0) << x;

  const auto r = values(tensor(bb::InitKind::randint, 2, 9, n, bb::DType::int32), 7);
  std::set<double> seen(r.begin(), r.end());
  EXPECT_EQ(seen, (std::set<double>{2, 3, 4, 5, 6, 7, 8}));

  for (auto kind : {bb::InitKind::randn, bb::InitKind::uniform}) {
    const auto a = values(tensor(kind, 0, 1, n), 11), b = values(tensor(kind, 0, 1, n), 12);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    EXPECT_LT(same, 8u) << bb::init_kind_name(kind) << ": a cache of the elements that did not change would gain";
  }
  // Half precision: the same values, rounded to nearest as the dtype's own conversion rounds them
  // (float16's subnormals included: randn with std 1e-4 makes many).
  for (const double scale : {1.0, 1e-4}) {
    const auto f = values(tensor(bb::InitKind::randn, 0, scale, 4096), 5);
    for (auto dt : {bb::DType::float16, bb::DType::bfloat16}) {
      const auto h = values(tensor(bb::InitKind::randn, 0, scale, 4096, dt), 5);
      std::vector<uint8_t> one(2);
      for (std::size_t i = 0; i < h.size(); ++i) {
        bb::store_element(dt, one.data(), 0, f[i]);
        ASSERT_EQ(h[i], bb::load_element(dt, one.data(), 0)) << bb::dtype_name(dt) << " element " << i << " of " << f[i];
      }
    }
  }
  // Bounds: uniform never reaches b in float; integers wider than a float holds come from the
  // manifest's exact generator, inside [a, b) and varied.
  for (double x : values(tensor(bb::InitKind::uniform, 0.0, 1.0, n), 9)) ASSERT_LT(x, 1.0);
  const auto wide = values(tensor(bb::InitKind::randint, 1e8, 1e8 + 10, 4096, bb::DType::int64), 3);
  std::set<double> wide_seen(wide.begin(), wide.end());
  EXPECT_EQ(wide_seen.size(), 10u);
  for (double x : wide) ASSERT_TRUE(x >= 1e8 && x < 1e8 + 10) << x;
  // An initialiser that cannot vary gives the manifest's values.
  const auto ones = values(tensor(bb::InitKind::ones, 0, 0, 5), 3);
  EXPECT_EQ(ones, std::vector<double>(5, 1.0));
}

}  // namespace
