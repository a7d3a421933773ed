#include "plan/value_variants.hpp"

#include <backendbench/detail/init_values.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace bb {

namespace {

// Powers of two per dtype: float16 has 5 exponent bits (normals from 2^-14, largest 65504),
// float32 and bfloat16 8 (normals from 2^-126), float64 11 (from 2^-1022).
struct Powers {
  int32_t f16, f32, f64;  // bfloat16 as float32
};

struct VariantRow {
  ValueVariant variant;
  const char* name;
  bool by_default;
  uint32_t twist;  // gen::Twist; zeros makes its own initialiser
  Powers powers;   // kScaled: the scale; kMixed: the spread (docs/MANIFEST.md's table says what each makes)
};

// clang-format off
constexpr VariantRow kVariants[] = {
    {ValueVariant::zeros,    "zeros",    true,  gen::kAsMade,  {0, 0, 0}},
    {ValueVariant::tiny,     "tiny",     true,  gen::kScaled,  {-10, -12, -12}},
    {ValueVariant::huge,     "huge",     true,  gen::kScaled,  {8, 24, 24}},
    {ValueVariant::mixed,    "mixed",    true,  gen::kMixed,   {4, 8, 8}},
    {ValueVariant::denormal, "denormal", true,  gen::kScaled,  {-18, -133, -1030}},
    {ValueVariant::inf,      "inf",      false, gen::kSomeInf, {0, 0, 0}},
    {ValueVariant::nan,      "nan",      false, gen::kSomeNan, {0, 0, 0}},
};
// clang-format on
static_assert(std::size(kVariants) == kValueVariantCount);

const VariantRow& row(ValueVariant v) { return kVariants[static_cast<int>(v)]; }

}  // namespace

VariantSet default_variants() {
  VariantSet s = 0;
  for (const auto& r : kVariants)
    if (r.by_default) s |= variant_bit(r.variant);
  return s;
}

const char* variant_name(ValueVariant v) { return row(v).name; }

std::optional<ValueVariant> parse_variant(std::string_view name) {
  for (const auto& r : kVariants)
    if (name == r.name) return r.variant;
  return std::nullopt;
}

Expected<VariantSet> parse_variant_set(std::string_view text) {
  if (text == "default") return default_variants();
  if (text == "none") return VariantSet{0};
  if (text == "all") return kAllVariants;
  VariantSet s = 0;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view word = text.substr(at, comma - at);
    const auto v = parse_variant(word);
    if (!v) {
      std::vector<std::string> names;
      for (const auto& r : kVariants) names.push_back(r.name);
      return make_error(fmt::format("'{}' is no value variant; expected default, none, all, or some of: {}", word, fmt::join(names, ", ")));
    }
    s |= variant_bit(*v);
    at = comma + 1;
  }
  return s;
}

std::string variant_set_text(VariantSet s) {
  if (s == default_variants()) return "default";
  if (s == 0) return "none";
  if (s == kAllVariants) return "all";
  std::vector<std::string> names;
  for (const auto& r : kVariants)
    if (s & variant_bit(r.variant)) names.push_back(r.name);
  return fmt::format("{}", fmt::join(names, ","));
}

std::string default_variant_option() {
  const char* v = std::getenv("BACKENDBENCH_VARIANTS");
  return v && *v ? v : "default";
}

InitSpec vary_init(const InitSpec& base, ValueVariant v, DType t) {
  const VariantRow& r = row(v);
  InitSpec out = base;
  if (v == ValueVariant::zeros) {
    out.kind = InitKind::zeros;
    out.a = 0;
    out.b = 0;
    return out;
  }
  out.twist = r.twist;
  out.twist_log2 = t == DType::float16 ? r.powers.f16 : t == DType::float64 ? r.powers.f64 : r.powers.f32;
  return out;
}

}  // namespace bb
