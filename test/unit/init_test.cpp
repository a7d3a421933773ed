#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include <backendbench/detail/init_values.h>
#include <backendbench/plugin.hpp>

#include "init.hpp"
#include "npy.hpp"
#include "plan/value_variants.hpp"

namespace {
bb::ConcreteTensor tensor(bb::DType t, std::vector<int64_t> shape, bb::InitSpec init) {
  bb::ConcreteTensor c;
  c.name = "x";
  c.shape = std::move(shape);
  c.dtype = t;
  c.init = init;
  return c;
}
std::vector<uint8_t> fill(const bb::ConcreteTensor& t, uint64_t seed) {
  std::vector<uint8_t> out(t.nbytes());
  auto s = bb::fill_tensor(t, out.data(), seed, std::filesystem::temp_directory_path());
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return out;
}
}  // namespace

TEST(Init, SameSeedSameBytesForEveryDtype) {
  for (bb::DType dt : bb::all_dtypes()) {
    for (auto kind : {bb::InitKind::randn, bb::InitKind::uniform, bb::InitKind::randint}) {
      if (dt == bb::DType::bool_ && kind != bb::InitKind::randint) continue;  // any nonzero is true
      const bool small = dt == bb::DType::bool_ || dt == bb::DType::uint8;
      bb::InitSpec init{kind, kind == bb::InitKind::randn ? 0.0 : small ? 0.0 : -5.0, kind == bb::InitKind::randn ? 1.0 : small ? 2.0 : 5.0, {}, 0};
      auto t = tensor(dt, {257}, init);
      EXPECT_EQ(fill(t, 42), fill(t, 42)) << bb::dtype_name(dt);
      EXPECT_NE(fill(t, 42), fill(t, 43)) << bb::dtype_name(dt);
    }
  }
}

TEST(Init, KnownValuesAreStableAcrossReleases) {
  // Pinned: a change here changes every user's inputs, which must be deliberate.
  EXPECT_EQ(bb::random_bits(0, 0), 0xa706dd2f4d197e6full);
}

TEST(Init, DistributionsHaveTheirShape) {
  const int n = 200000;
  auto t = tensor(bb::DType::float64, {n}, {bb::InitKind::randn, 3.0, 2.0, {}, 0});
  auto bytes = fill(t, 1);
  const double* v = reinterpret_cast<const double*>(bytes.data());
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) sum += v[i], sq += v[i] * v[i];
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 3.0, 0.03);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.03);

  auto u = tensor(bb::DType::float32, {n}, {bb::InitKind::uniform, -2.0, 6.0, {}, 0});
  auto ub = fill(u, 2);
  const float* f = reinterpret_cast<const float*>(ub.data());
  float lo = 100, hi = -100;
  for (int i = 0; i < n; ++i) lo = std::min(lo, f[i]), hi = std::max(hi, f[i]);
  EXPECT_GE(lo, -2.0f);
  EXPECT_LT(hi, 6.0f);
  EXPECT_LT(lo, -1.99f);

  auto r = tensor(bb::DType::int32, {n}, {bb::InitKind::randint, 0, 3, {}, 0});
  auto rb = fill(r, 3);
  const int32_t* ri = reinterpret_cast<const int32_t*>(rb.data());
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(ri[i], 0);
    ASSERT_LT(ri[i], 3);
    ++counts[ri[i]];
  }
  for (int c : counts) EXPECT_NEAR(c, n / 3.0, n * 0.01);
}

TEST(Init, DeterministicKinds) {
  auto a = fill(tensor(bb::DType::int16, {5}, {bb::InitKind::arange, 10, -3, {}, 0}), 0);
  EXPECT_EQ(reinterpret_cast<const int16_t*>(a.data())[4], -2);
  auto o = fill(tensor(bb::DType::bfloat16, {3}, {bb::InitKind::ones, 0, 0, {}, 0}), 0);
  EXPECT_EQ(reinterpret_cast<const uint16_t*>(o.data())[2], 0x3f80);
  auto z = fill(tensor(bb::DType::float32, {3}, {bb::InitKind::zeros, 0, 0, {}, 0}), 0);
  EXPECT_EQ(z, std::vector<uint8_t>(12, 0));
  auto f = fill(tensor(bb::DType::float16, {2}, {bb::InitKind::full, 2.5, 0, {}, 0}), 0);
  EXPECT_EQ(reinterpret_cast<const uint16_t*>(f.data())[1], 0x4100);
  auto b = fill(tensor(bb::DType::bool_, {1000}, {bb::InitKind::randint, 0, 2, {}, 0}), 9);
  for (uint8_t v : b) ASSERT_LE(v, 1);
}

TEST(Init, NpyFilesAreReadConvertedAndChecked) {
  const auto dir = std::filesystem::temp_directory_path() / "bb_init_npy";
  std::filesystem::create_directories(dir);
  std::vector<float> data{1.5f, -2.0f, 3.25f, 4.0f};
  ASSERT_TRUE(bb::write_npy(dir / "x.npy", bb::DType::float32, {2, 2}, data.data()).ok());
  bb::InitSpec spec{bb::InitKind::npy, 0, 0, "x.npy", 0};

  auto t = tensor(bb::DType::float32, {2, 2}, spec);
  std::vector<uint8_t> out(t.nbytes());
  ASSERT_TRUE(bb::fill_tensor(t, out.data(), 0, dir).ok());
  EXPECT_EQ(std::memcmp(out.data(), data.data(), 16), 0);

  auto h = tensor(bb::DType::float16, {2, 2}, spec);  // converted on load
  std::vector<uint8_t> hout(h.nbytes());
  ASSERT_TRUE(bb::fill_tensor(h, hout.data(), 0, dir).ok());
  EXPECT_EQ(reinterpret_cast<const uint16_t*>(hout.data())[2], bb::float_to_half_bits(3.25f));

  auto wrong = tensor(bb::DType::float32, {4}, spec);
  std::vector<uint8_t> wout(wrong.nbytes());
  auto s = bb::fill_tensor(wrong, wout.data(), 0, dir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("does not match input 'x'"), std::string::npos) << s.error().message;
}

// A large tensor is filled by several threads: the values are those of one thread, element by
// element (3M + 5 elements: above the threshold, ranges of unequal length).
TEST(Init, ALargeTensorFilledInParallelHoldsTheSerialValues) {
  const int64_t n = 3 * (int64_t{1} << 20) + 5;
  auto t = tensor(bb::DType::float32, {n}, bb::InitSpec{bb::InitKind::randn, 0.5, 2.0, {}, 0});
  const auto out = fill(t, 7);
  const auto* f = reinterpret_cast<const float*>(out.data());
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i)
    if (f[i] != static_cast<float>(0.5 + 2.0 * bb::random_normal(7, static_cast<uint64_t>(i)))) ++mismatches;
  EXPECT_EQ(mismatches, 0);
  auto u = tensor(bb::DType::bfloat16, {n}, bb::InitSpec{bb::InitKind::arange, 1.0, 1.0, {}, 0});
  const auto bytes = fill(u, 0);
  for (int64_t i : {int64_t{0}, n / 3, n / 2 + 1, n - 1}) {
    bb::bfloat16 v;
    std::memcpy(&v, bytes.data() + 2 * i, 2);
    EXPECT_EQ(static_cast<float>(v), static_cast<float>(bb::bfloat16(static_cast<float>(1.0 + static_cast<double>(i))))) << i;
  }
}

// A checked call's sparse inputs make only the elements they change: init_value must be what
// fill_tensor writes, element for element, for every initialiser but .npy.
TEST(Init, OneElementIsTheValueTheWholeFillWrites) {
  const int64_t n = 5000;
  for (bb::InitKind k : {bb::InitKind::randn, bb::InitKind::uniform, bb::InitKind::randint, bb::InitKind::ones, bb::InitKind::zeros,
                         bb::InitKind::arange, bb::InitKind::full})
    for (bb::DType d : {bb::DType::float32, bb::DType::float16, bb::DType::bfloat16, bb::DType::float64, bb::DType::int32, bb::DType::int64}) {
      auto t = tensor(d, {n}, bb::InitSpec{k, -3.0, 7.0, {}, 0});
      const auto whole = fill(t, 99);
      std::vector<uint8_t> one(bb::dtype_size(d));
      for (int64_t i : {int64_t{0}, int64_t{1}, n / 2, n - 1}) {
        const auto v = bb::init_value(t.init, 99, static_cast<std::size_t>(i));
        ASSERT_TRUE(v.has_value());
        bb::store_element(d, one.data(), 0, *v);
        EXPECT_EQ(std::memcmp(one.data(), whole.data() + i * one.size(), one.size()), 0)
            << bb::init_kind_name(k) << " " << bb::dtype_name(d) << " at " << i;
      }
    }
  EXPECT_FALSE(bb::init_value(bb::InitSpec{bb::InitKind::npy, 0, 0, "x.npy", 0}, 1, 0).has_value());
}

// The generators' own logarithm and cosine (detail/init_values.h, shared with the device
// runtimes, no libm) are libm's to within a few units in the last place: the normal draws keep
// their distribution, and the host's and the device's bits are one code's.
TEST(Init, TheGeneratorsOwnLogAndCosineAreAccurate) {
  double worst_log = 0, worst_cos = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const double u = 1.0 - bb::random_uniform01(5, i);  // (0, 1]
    const double want = std::log(u);
    if (want != 0) worst_log = std::max(worst_log, std::fabs(bb::gen::log_pos(u) - want) / std::fabs(want));
    else EXPECT_EQ(bb::gen::log_pos(u), 0.0);
    const double v = bb::random_uniform01(6, i);
    worst_cos = std::max(worst_cos, std::fabs(bb::gen::cos_turn(v) - std::cos(6.283185307179586 * v)));
  }
  EXPECT_LT(worst_log, 1e-15);  // a few units in the last place
  EXPECT_LT(worst_cos, 4e-15);  // most of it the 2 pi v product libm's argument rounds
  EXPECT_EQ(bb::gen::log_pos(1.0), 0.0);
  EXPECT_NEAR(bb::gen::log_pos(0x1p-53), -53 * 0.6931471805599453, 1e-13);
  for (double v : {0.0, 0.25, 0.5, 0.75}) EXPECT_NEAR(bb::gen::cos_turn(v), std::cos(6.283185307179586 * v), 1e-15) << v;
  // Pinned: a change here changes every user's normal inputs, which must be deliberate.
  EXPECT_EQ(bb::random_normal(0, 0), -0x1.e88fba130d563p-3);
  EXPECT_EQ(bb::random_normal(1234, 7), 0x1.60cf219c515b7p-1);
}

// The stores the device runtimes share round as plugin.hpp's conversions do, for floats of
// every magnitude (subnormal halves, overflow to infinity, NaN), and saturate integers.
TEST(Init, TheSharedStoresRoundAsThePluginHeader) {
  int checked = 0;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 65521) {  // a prime stride: every exponent, many mantissas
    const float f = bb::gen::float_of(static_cast<uint32_t>(u));
    ASSERT_EQ(bb::gen::half_bits(f), bb::float_to_half_bits(f)) << std::hex << u;
    ASSERT_EQ(bb::gen::bfloat16_bits(f), bb::float_to_bfloat16_bits(f)) << std::hex << u;
    ++checked;
  }
  for (float f : {0.0f, -0.0f, 5.9604645e-8f, 2.9802322e-8f, 8.940697e-8f, 6.1035156e-5f, 65504.0f, 65520.0f, 1e30f})
    EXPECT_EQ(bb::gen::half_bits(f), bb::float_to_half_bits(f)) << f;
  EXPECT_GT(checked, 65000);
  int8_t i8 = 0;
  EXPECT_TRUE(bb::gen::store(kDLInt, 8, &i8, 0, 1e9));
  EXPECT_EQ(i8, 127);
  int64_t i64 = 0;
  EXPECT_TRUE(bb::gen::store(kDLInt, 64, &i64, 0, 1e300));
  EXPECT_EQ(i64, INT64_MAX);
  EXPECT_TRUE(bb::gen::store(kDLInt, 64, &i64, 0, std::nan("")));
  EXPECT_EQ(i64, 0);
  uint8_t u8 = 9;
  EXPECT_TRUE(bb::gen::store(kDLUInt, 8, &u8, 0, -4.0));
  EXPECT_EQ(u8, 0);
  EXPECT_FALSE(bb::gen::store(kDLUInt, 32, &u8, 0, 1.0));  // no dtype of the host's
}

// Value variants (value_variants.hpp): each is the case's own draws made extreme, element for
// element, whatever fill path makes them; tiny and huge are the draws scaled by a power of two,
// exactly; denormal lands below the dtype's smallest normal; mixed flips about half the signs;
// nan and inf replace about one element in 16 and leave the others as drawn.
TEST(Init, ValueVariantsAreTheCasesDrawsMadeExtreme) {
  const int64_t n = 4096;
  const auto base = tensor(bb::DType::float32, {n}, bb::InitSpec{bb::InitKind::randn, 0.0, 1.0, {}, 0});
  const auto plain = fill(base, 5);
  auto as = [&](bb::ValueVariant v, bb::DType d) {
    auto t = base;
    t.dtype = d;
    t.init = bb::vary_init(base.init, v, d);
    return t;
  };
  auto floats = [](const std::vector<uint8_t>& bytes) {
    std::vector<float> f(bytes.size() / 4);
    std::memcpy(f.data(), bytes.data(), bytes.size());
    return f;
  };
  const auto x = floats(plain);
  const auto tiny = floats(fill(as(bb::ValueVariant::tiny, bb::DType::float32), 5));
  const auto huge = floats(fill(as(bb::ValueVariant::huge, bb::DType::float32), 5));
  const auto denormal = floats(fill(as(bb::ValueVariant::denormal, bb::DType::float32), 5));
  const auto mixed = floats(fill(as(bb::ValueVariant::mixed, bb::DType::float32), 5));
  const auto nan = floats(fill(as(bb::ValueVariant::nan, bb::DType::float32), 5));
  const auto zeros = floats(fill(as(bb::ValueVariant::zeros, bb::DType::float32), 5));
  int flipped = 0, nans = 0, subnormal = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(tiny[i], std::ldexp(x[i], -12)) << i;
    EXPECT_EQ(huge[i], std::ldexp(x[i], 24)) << i;
    EXPECT_LT(std::fabs(denormal[i]), std::numeric_limits<float>::min()) << i;
    subnormal += denormal[i] != 0.0f ? 1 : 0;
    int e = 0;
    const float m = std::frexp(std::fabs(mixed[i] / x[i]), &e);
    EXPECT_EQ(m, 0.5f) << "a power of two apart at " << i;
    EXPECT_LE(std::abs(e - 1), 8) << i;
    flipped += (mixed[i] < 0) != (x[i] < 0) ? 1 : 0;
    if (std::isnan(nan[i])) ++nans;
    else EXPECT_EQ(nan[i], x[i]) << i;
    EXPECT_EQ(zeros[i], 0.0f);
  }
  EXPECT_GT(subnormal, n * 9 / 10);
  EXPECT_NEAR(flipped, n / 2, n / 10);
  EXPECT_NEAR(nans, n / 16, n / 40);
  // Element by element (the device's path) as the whole fill (the host's), every variant and dtype.
  for (int v = 0; v < bb::kValueVariantCount; ++v)
    for (bb::DType d : {bb::DType::float32, bb::DType::float16, bb::DType::bfloat16, bb::DType::float64}) {
      const auto t = as(static_cast<bb::ValueVariant>(v), d);
      const auto whole = fill(t, 5);
      std::vector<uint8_t> one(bb::dtype_size(d));
      for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{77}, n - 1}) {
        bb::store_element(d, one.data(), 0, *bb::init_value(t.init, 5, static_cast<std::size_t>(i)));
        EXPECT_EQ(std::memcmp(one.data(), whole.data() + i * one.size(), one.size()), 0)
            << bb::variant_name(static_cast<bb::ValueVariant>(v)) << " " << bb::dtype_name(d) << " at " << i;
      }
    }
  // float16's denormals: below 2^-14, most not zero.
  const auto h = fill(as(bb::ValueVariant::denormal, bb::DType::float16), 5);
  int h_subnormal = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t b;
    std::memcpy(&b, h.data() + 2 * i, 2);
    EXPECT_EQ(b & 0x7c00u, 0u) << "exponent bits of a subnormal half at " << i;
    h_subnormal += (b & 0x3ffu) != 0 ? 1 : 0;
  }
  EXPECT_GT(h_subnormal, n * 9 / 10);
}
