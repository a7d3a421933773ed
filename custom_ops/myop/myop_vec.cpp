// myop, vectorised: 8 lanes at a time with GCC/Clang vector extensions (AVX2 on x86-64), with
// 16-bit types widened to float in registers and rounded back to nearest even (F16C for
// float16 where the target has it).
#include <backendbench/plugin.hpp>

#include <cstring>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace {

typedef float f32x8 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));

inline f32x8 load8(const float* p) {
  f32x8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(float* p, f32x8 v) { std::memcpy(p, &v, sizeof v); }

void scale_f32(const float* x, float* y, int64_t n, float a) {
  int64_t i = 0;
  const f32x8 av = {a, a, a, a, a, a, a, a};
  for (; i + 8 <= n; i += 8) store8(y + i, load8(x + i) * av);
  for (; i < n; ++i) y[i] = a * x[i];
}

// bfloat16: widening is a shift; narrowing rounds to nearest even (NaN kept quiet).
void scale_bf16(const uint16_t* x, uint16_t* y, int64_t n, float a) {
  int64_t i = 0;
  const f32x8 av = {a, a, a, a, a, a, a, a};
  for (; i + 8 <= n; i += 8) {
    u32x8 w;
    for (int k = 0; k < 8; ++k) w[k] = static_cast<uint32_t>(x[i + k]) << 16;
    f32x8 f;
    std::memcpy(&f, &w, sizeof f);
    f *= av;
    u32x8 b;
    std::memcpy(&b, &f, sizeof b);
    const u32x8 rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
    for (int k = 0; k < 8; ++k) {
      const bool nan = (b[k] & 0x7fffffffu) > 0x7f800000u;
      y[i + k] = nan ? static_cast<uint16_t>((b[k] >> 16) | 0x40u) : static_cast<uint16_t>(rounded[k]);
    }
  }
  for (; i < n; ++i) y[i] = bb::float_to_bfloat16_bits(a * bb::bfloat16_bits_to_float(x[i]));
}

#if defined(__F16C__)
// float16 with the F16C conversions: 8 halves widened, scaled and rounded back in registers.
void scale_f16(const uint16_t* x, uint16_t* y, int64_t n, float a) {
  int64_t i = 0;
  const __m256 av = _mm256_set1_ps(a);
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_mul_ps(v, av), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) y[i] = bb::float_to_half_bits(a * bb::half_bits_to_float(x[i]));
}
#endif

template <typename T>
void scale_generic(const T* x, T* y, int64_t n, float a) {
  float buf[8];
  int64_t i = 0;
  const f32x8 av = {a, a, a, a, a, a, a, a};
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) buf[k] = static_cast<float>(x[i + k]);
    store8(buf, load8(buf) * av);
    for (int k = 0; k < 8; ++k) y[i + k] = static_cast<T>(buf[k]);
  }
  for (; i < n; ++i) y[i] = static_cast<T>(a * static_cast<float>(x[i]));
}

void myop(bb::Call& c) {
#if defined(__x86_64__) && defined(__AVX2__)
  // Built for AVX2/F16C: on an older CPU, say so instead of dying on an illegal instruction.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c"))
    throw bb::Error("this build of myop_vec needs AVX2 and F16C", BB_ERR_UNSUPPORTED);
#endif
  const double alpha = c.attr<double>("alpha", 2.0);
  const float a = static_cast<float>(alpha);
  const DLTensor& xt = c.input("x");
  const int64_t n = bb::numel_of(xt);
  bb::dispatch_floating(xt.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto x = c.input<T>("x");
    auto y = c.output<T>("y");
    if constexpr (std::is_same_v<T, float>) {
      scale_f32(x.data(), y.data(), n, a);
    } else if constexpr (std::is_same_v<T, bb::bfloat16>) {
      scale_bf16(reinterpret_cast<const uint16_t*>(x.data()), reinterpret_cast<uint16_t*>(y.data()), n, a);
    } else if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i];
#if defined(__F16C__)
    } else if constexpr (std::is_same_v<T, bb::half>) {
      scale_f16(reinterpret_cast<const uint16_t*>(x.data()), reinterpret_cast<uint16_t*>(y.data()), n, a);
#endif
    } else {
      scale_generic(x.data(), y.data(), n, a);
    }
  });
}

}  // namespace

BB_KERNEL_IMPL(myop, myop)
BB_PLUGIN_INFO("1.0.0", "cpu", "float32,float64,float16,bfloat16")
