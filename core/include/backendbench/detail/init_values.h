// The counter-based input generators, written once for the host (core/src/init.cpp) and the
// devices (plugins/common/gpu_runtime.inc): element i of an initialiser depends on (seed, i)
// alone, and has the same bits on the CPU, on CUDA and on HIP, so a GPU case's inputs made on
// its device are the bytes the host would have made.
//
// Same bits everywhere: no libm. The logarithm and the cosine of the normal draws are this
// file's polynomials; every operation is one IEEE round-to-nearest step (device code calls
// __dadd_rn / __dmul_rn / __ddiv_rn, never fused; hipcc's are plain operators under
// `fp contract(off)`; the host compiles init.cpp with -ffp-contract=off), and square root and
// the conversions to narrower types are exactly rounded on every side.
#ifndef BACKENDBENCH_DETAIL_INIT_VALUES_H
#define BACKENDBENCH_DETAIL_INIT_VALUES_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define BB_HD __host__ __device__
#else
#define BB_HD
#endif
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define BB_ON_DEVICE 1
#else
#define BB_ON_DEVICE 0
#endif
#if defined(__clang__)
#define BB_NO_CONTRACT _Pragma("clang fp contract(off)")
#else
#define BB_NO_CONTRACT
#endif

#ifdef __cplusplus
namespace bb::gen {

// The initialisers a device can make (the manifest's InitKind, less npy), in its order.
enum Kind : uint32_t { kRandn = 0, kUniform = 1, kRandint = 2, kOnes = 3, kZeros = 4, kArange = 5, kFull = 6 };

// ---- one rounding per operation
BB_HD inline double add(double a, double b) {
  BB_NO_CONTRACT
#if BB_ON_DEVICE
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
BB_HD inline double mul(double a, double b) {
  BB_NO_CONTRACT
#if BB_ON_DEVICE
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
BB_HD inline double div(double a, double b) {
#if BB_ON_DEVICE
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
BB_HD inline double sqrt_rn(double a) {
#if BB_ON_DEVICE
  return __dsqrt_rn(a);
#else
  return __builtin_sqrt(a);  // IEEE: exactly rounded
#endif
}
BB_HD inline double floor_exact(double a) {
  if (!(a > -4503599627370496.0 && a < 4503599627370496.0)) return a;  // 2^52 and beyond, NaN: integral already
  const double t = static_cast<double>(static_cast<int64_t>(a));
  return t > a ? t - 1.0 : t;  // exact
}
BB_HD inline uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
BB_HD inline double double_of(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

// ---- the generators
// splitmix64's finaliser, twice: bits of counter `counter` of stream `seed`.
BB_HD inline uint64_t random_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z = z ^ (z >> 31);
  // a second round decorrelates neighbouring counters further
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
// [0, 1), 53 bits: exact on every side.
BB_HD inline double random_uniform01(uint64_t seed, uint64_t counter) {
  return static_cast<double>(random_bits(seed, counter) >> 11) * (1.0 / 9007199254740992.0);
}

// Natural logarithm of a normal positive x (the uniforms' (0, 1]), to about 1e-16 relative:
// x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172.
BB_HD inline double log_pos(double x) {
  uint64_t u = bits_of(x);
  int64_t e = static_cast<int64_t>((u >> 52) & 0x7ff) - 1023;
  double m = double_of((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) {
    m = mul(m, 0.5);  // exact
    ++e;
  }
  const double s = div(add(m, -1.0), add(m, 1.0)), s2 = mul(s, s);
  // atanh(s) / s = sum s^(2k) / (2k + 1): s^2 < 0.0295, 13 terms reach 2^-60
  double p = 1.0 / 27;
  p = add(mul(p, s2), 1.0 / 25);
  p = add(mul(p, s2), 1.0 / 23);
  p = add(mul(p, s2), 1.0 / 21);
  p = add(mul(p, s2), 1.0 / 19);
  p = add(mul(p, s2), 1.0 / 17);
  p = add(mul(p, s2), 1.0 / 15);
  p = add(mul(p, s2), 1.0 / 13);
  p = add(mul(p, s2), 1.0 / 11);
  p = add(mul(p, s2), 1.0 / 9);
  p = add(mul(p, s2), 1.0 / 7);
  p = add(mul(p, s2), 1.0 / 5);
  p = add(mul(p, s2), 1.0 / 3);
  const double log_m = mul(mul(2.0, s), add(mul(p, s2), 1.0));
  // e ln 2 in two parts: ln2_hi has 32 significant bits, so e * ln2_hi is exact for |e| < 2^21
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  return add(mul(de, ln2_hi), add(mul(de, ln2_lo), log_m));
}

// cos(2 pi u) (sin(2 pi u) where `sine`) for u in [0, 1), to about 1e-16: 4u = k + r with k an
// integer and |r| <= 1/2 (exact), x = r pi/2 in [-pi/4, pi/4], and the quadrant k (k - 1 for the
// sine: sin t = cos(t - pi/2)) picks +-cos x or +-sin x.
BB_HD inline double cos_turn(double u, bool sine = false) {
  const double t = mul(u, 4.0);  // exact
  const double k = floor_exact(add(t, 0.5));
  const double x = mul(add(t, -k), 1.5707963267948966);
  const double x2 = mul(x, x);
  // Taylor series to x^18 and x^19: |x| <= 0.786, the next terms are below 2^-60. Only the one
  // the quadrant needs is evaluated.
  const int quadrant = (static_cast<int>(k) + (sine ? 3 : 0)) & 3;
  if ((quadrant & 1) == 0) {
    double c = 1.0 / 6402373705728000.0;           // 1/18!
    c = add(mul(c, x2), -1.0 / 20922789888000.0);  // 1/16!
    c = add(mul(c, x2), 1.0 / 87178291200.0);
    c = add(mul(c, x2), -1.0 / 479001600.0);
    c = add(mul(c, x2), 1.0 / 3628800.0);
    c = add(mul(c, x2), -1.0 / 40320.0);
    c = add(mul(c, x2), 1.0 / 720.0);
    c = add(mul(c, x2), -1.0 / 24.0);
    c = add(mul(c, x2), 1.0 / 2.0);
    const double cos_x = add(1.0, -mul(c, x2));
    return quadrant == 0 ? cos_x : -cos_x;
  }
  double s = 1.0 / 121645100408832000.0;          // 1/19!
  s = add(mul(s, x2), -1.0 / 355687428096000.0);  // 1/17!
  s = add(mul(s, x2), 1.0 / 1307674368000.0);
  s = add(mul(s, x2), -1.0 / 6227020800.0);
  s = add(mul(s, x2), 1.0 / 39916800.0);
  s = add(mul(s, x2), -1.0 / 362880.0);
  s = add(mul(s, x2), 1.0 / 5040.0);
  s = add(mul(s, x2), -1.0 / 120.0);
  s = add(mul(s, x2), 1.0 / 6.0);
  const double sin_x = add(x, -mul(mul(s, x2), x));
  return quadrant == 1 ? -sin_x : sin_x;
}

// N(0, 1) by Box-Muller: normals 2j and 2j + 1 are r cos(2 pi u2) and r sin(2 pi u2) of one
// pair of uniforms (counters 2j and 2j + 1), r = sqrt(-2 log u1). A fill makes the pair's radius
// once for both (normal_radius, normal_of_pair); any element alone is random_normal.
BB_HD inline double normal_radius(uint64_t seed, uint64_t pair) {
  const double u1 = add(1.0, -random_uniform01(seed, 2 * pair));  // (0, 1], exact
  return sqrt_rn(mul(-2.0, log_pos(u1)));
}
BB_HD inline double normal_of_pair(uint64_t seed, uint64_t pair, double radius, bool second) {
  return mul(radius, cos_turn(random_uniform01(seed, 2 * pair + 1), second));
}
BB_HD inline double random_normal(uint64_t seed, uint64_t counter) {
  return normal_of_pair(seed, counter >> 1, normal_radius(seed, counter >> 1), (counter & 1) != 0);
}

// Element i of initialiser `kind` with parameters a, b (randn: mean, std; uniform, randint:
// [a, b); arange: start, step; full: the value).
BB_HD inline double value(uint32_t kind, double a, double b, uint64_t seed, uint64_t i) {
  switch (kind) {
    case kRandn: return add(a, mul(b, random_normal(seed, i)));
    case kUniform: return add(a, mul(add(b, -a), random_uniform01(seed, i)));
    case kRandint: {
      const double lo = -floor_exact(-a);  // ceil
      const double span = add(-floor_exact(-b), -lo);
      return add(lo, floor_exact(mul(span, random_uniform01(seed, i))));
    }
    case kOnes: return 1.0;
    case kZeros: return 0.0;
    case kArange: return add(a, mul(b, static_cast<double>(i)));
    default: return a;  // kFull
  }
}

// ---- value variants (the host's value_variants.hpp): what an initialiser made, made extreme
enum Twist : uint32_t { kAsMade = 0, kScaled = 1, kMixed = 2, kSomeNan = 3, kSomeInf = 4 };

// 2^e, exactly, for e in [-1074, 1023] (below -1022: a subnormal).
BB_HD inline double pow2(int32_t e) {
  if (e >= -1022) return double_of(static_cast<uint64_t>(e + 1023) << 52);
  return double_of(uint64_t{1} << (e + 1074));
}
// v of element i as twist `twist` with power `p` makes it: scaled by 2^p (one rounding, none
// while the result stays normal); scaled by 2^e, e uniform in [-p, p], its sign flipped half the
// time; one element in 16 NaN, or +-infinity. The draws are a stream of the tensor's seed of
// their own, so the values underneath are the case's.
BB_HD inline double twisted(uint32_t twist, int32_t p, double v, uint64_t seed, uint64_t i) {
  if (twist == kAsMade) return v;
  const uint64_t r = random_bits(seed ^ 0x74776973742d7631ull, i);
  switch (twist) {
    case kScaled: return mul(v, pow2(p));
    case kMixed: {
      const int32_t e = static_cast<int32_t>(r % static_cast<uint64_t>(2 * p + 1)) - p;
      const double w = mul(v, pow2(e));
      return (r >> 63) != 0 ? -w : w;
    }
    case kSomeNan: return (r & 15) == 0 ? double_of(0x7ff8000000000000ull) : v;
    default: return (r & 15) == 0 ? double_of((r >> 63) != 0 ? 0xfff0000000000000ull : 0x7ff0000000000000ull) : v;
  }
}
// Element i as an initialiser makes it, twisted.
BB_HD inline double made(uint32_t kind, double a, double b, uint32_t twist, int32_t p, uint64_t seed, uint64_t i) {
  return twisted(twist, p, value(kind, a, b, seed, i), seed, i);
}

// ---- storing a value as a dtype (DLPack code and bits), as the host's store_element does
enum Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kBool = 6 };

BB_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
BB_HD inline float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
// Round to nearest even, subnormals, infinities and NaNs as plugin.hpp's float_to_half_bits.
BB_HD inline uint16_t half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? (0x200u | ((abs >> 13) & 0x3ffu)) : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // a half subnormal or 0: units of 2^-24, rounded to even
    const uint32_t units = static_cast<uint32_t>(float_of(abs) * 16777216.0f);  // exact: < 2^10, truncated
    const float rest = float_of(abs) * 16777216.0f - static_cast<float>(units);   // exact
    uint32_t r = units;
    if (rest > 0.5f || (rest == 0.5f && (units & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  const uint32_t mant = abs & 0x7fffffu;
  const uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}
BB_HD inline uint16_t bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
// NaN to 0, clamped to [lo, hi], then truncated.
template <typename I>
BB_HD inline I saturate(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return static_cast<I>(lo);
  if (v >= hi) return static_cast<I>(hi);
  return static_cast<I>(v);
}

// Element i of `dst` (dtype code/bits) set to v. False for a dtype the host has not either.
BB_HD inline bool store(uint8_t code, uint8_t bits, void* dst, uint64_t i, double v) {
  switch (code) {
    case kFloat:
      if (bits == 32) static_cast<float*>(dst)[i] = static_cast<float>(v);
      else if (bits == 64) static_cast<double*>(dst)[i] = v;
      else if (bits == 16) static_cast<uint16_t*>(dst)[i] = half_bits(static_cast<float>(v));
      else return false;
      return true;
    case kBfloat:
      if (bits != 16) return false;
      static_cast<uint16_t*>(dst)[i] = bfloat16_bits(static_cast<float>(v));
      return true;
    case kInt:
      if (bits == 8) static_cast<int8_t*>(dst)[i] = saturate<int8_t>(v, -128.0, 127.0);
      else if (bits == 16) static_cast<int16_t*>(dst)[i] = saturate<int16_t>(v, -32768.0, 32767.0);
      else if (bits == 32) static_cast<int32_t*>(dst)[i] = saturate<int32_t>(v, -2147483648.0, 2147483647.0);
      else if (bits == 64) {
        // 2^63 is not an int64: the largest double below it clamps to INT64_MAX
        if (v != v) static_cast<int64_t*>(dst)[i] = 0;
        else if (v <= -9223372036854775808.0) static_cast<int64_t*>(dst)[i] = INT64_MIN;
        else if (v >= 9223372036854775807.0) static_cast<int64_t*>(dst)[i] = INT64_MAX;
        else static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(v);
      } else return false;
      return true;
    case kUInt:
      if (bits != 8) return false;
      static_cast<uint8_t*>(dst)[i] = saturate<uint8_t>(v, 0.0, 255.0);
      return true;
    case kBool:
      if (bits != 8) return false;
      static_cast<uint8_t*>(dst)[i] = v != 0.0 ? 1 : 0;
      return true;
    default: return false;
  }
}

}  // namespace bb::gen
#endif  // __cplusplus

#endif  // BACKENDBENCH_DETAIL_INIT_VALUES_H
