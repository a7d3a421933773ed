// Value variants: the values that find bugs random inputs miss. Every correctness case whose
// floating inputs come from a random initialiser also runs as `<case>~zeros`, `~tiny`, `~huge`,
// `~mixed` and `~denormal` (the same draws, made extreme); `~inf` and `~nan` where the manifest
// asks for them (the reference must define what comes out). An RMSNorm that forgot eps passes
// every randn case and fails `~tiny`; a softmax that does not subtract the row's maximum fails
// `~huge`. The table below is the whole set: a new variant is one row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dtype.hpp"
#include "expected.hpp"
#include "plan/init_spec.hpp"

namespace bb {

enum class ValueVariant : uint8_t { zeros, tiny, huge, mixed, denormal, inf, nan };
inline constexpr int kValueVariantCount = 7;

// A set of variants, one bit each (bit i: ValueVariant i).
using VariantSet = uint32_t;
constexpr VariantSet variant_bit(ValueVariant v) { return VariantSet{1} << static_cast<int>(v); }
// The variants every floating input of a random initialiser gets unless the manifest says
// otherwise: zeros, tiny, huge, mixed, denormal (inf and nan are asked for by name).
VariantSet default_variants();
inline constexpr VariantSet kAllVariants = (VariantSet{1} << kValueVariantCount) - 1;

const char* variant_name(ValueVariant v);
std::optional<ValueVariant> parse_variant(std::string_view name);

// "default", "none", "all", or names joined by commas ("zeros,tiny"). An error names the word
// that is none of them and lists what is.
Expected<VariantSet> parse_variant_set(std::string_view text);
// The set as parse_variant_set reads it back: "default", "none", "all" or the names.
std::string variant_set_text(VariantSet s);
// What --variants is when not given: BACKENDBENCH_VARIANTS where set, else "default".
std::string default_variant_option();

// `base` (an input's initialiser) as variant `v` makes it for dtype `t`: zeros; the same draws
// scaled by a power of two (tiny: near the smallest normals' side of the values a kernel meets,
// huge: where exp overflows and squares grow large, denormal: below the smallest normal), with
// their exponents spread and signs flipped (mixed), or with one element in 16 NaN or +-inf.
InitSpec vary_init(const InitSpec& base, ValueVariant v, DType t);

}  // namespace bb
