#include "dtype.hpp"

#include <backendbench/detail/init_values.h>
#include <backendbench/plugin.hpp>

#include <cmath>
#include <cstring>
#include <limits>

namespace bb {

namespace {
struct Entry {
  DType type;
  const char* name;
  std::size_t size;
};
constexpr Entry kEntries[] = {
    {DType::float32, "float32", 4}, {DType::float64, "float64", 8}, {DType::float16, "float16", 2},
    {DType::bfloat16, "bfloat16", 2}, {DType::int8, "int8", 1},     {DType::int16, "int16", 2},
    {DType::int32, "int32", 4},     {DType::int64, "int64", 8},     {DType::uint8, "uint8", 1},
    {DType::bool_, "bool", 1},
};

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kEntries)
    if (name == e.name) return e.type;
  struct Alias {
    const char* alias;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"fp32", DType::float32}, {"float", DType::float32},   {"f32", DType::float32},  {"fp64", DType::float64},
      {"double", DType::float64}, {"f64", DType::float64},   {"fp16", DType::float16}, {"half", DType::float16},
      {"f16", DType::float16},  {"bf16", DType::bfloat16},   {"int", DType::int32},    {"long", DType::int64},
      {"i8", DType::int8},      {"i16", DType::int16},       {"i32", DType::int32},    {"i64", DType::int64},
      {"u8", DType::uint8},     {"bool_", DType::bool_},
  };
  for (const auto& a : kAliases)
    if (name == a.alias) return a.type;
  return std::nullopt;
}

const char* dtype_name(DType t) { return kEntries[static_cast<int>(t)].name; }
std::size_t dtype_size(DType t) { return kEntries[static_cast<int>(t)].size; }

bool is_floating(DType t) {
  return t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16;
}

DLDataType to_dlpack(DType t) {
  switch (t) {
    case DType::float32: return dtype_of<float>();
    case DType::float64: return dtype_of<double>();
    case DType::float16: return dtype_of<half>();
    case DType::bfloat16: return dtype_of<bfloat16>();
    case DType::int8: return dtype_of<int8_t>();
    case DType::int16: return dtype_of<int16_t>();
    case DType::int32: return dtype_of<int32_t>();
    case DType::int64: return dtype_of<int64_t>();
    case DType::uint8: return dtype_of<uint8_t>();
    case DType::bool_: return dtype_of<bool>();
  }
  return dtype_of<float>();
}

std::optional<DType> from_dlpack(DLDataType t) {
  for (const auto& e : kEntries)
    if (same_dtype(to_dlpack(e.type), t)) return e.type;
  return std::nullopt;
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = [] {
    std::vector<DType> out;
    for (const auto& e : kEntries) out.push_back(e.type);
    return out;
  }();
  return v;
}

std::string dtype_names_list() {
  std::string s;
  for (const auto& e : kEntries) {
    if (!s.empty()) s += ", ";
    s += e.name;
  }
  return s;
}

double load_element(DType t, const void* data, std::size_t i) {
  switch (t) {
    case DType::float32: return static_cast<const float*>(data)[i];
    case DType::float64: return static_cast<const double*>(data)[i];
    case DType::float16: return half_bits_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bfloat16: return bfloat16_bits_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::int8: return static_cast<const int8_t*>(data)[i];
    case DType::int16: return static_cast<const int16_t*>(data)[i];
    case DType::int32: return static_cast<const int32_t*>(data)[i];
    case DType::int64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::uint8: return static_cast<const uint8_t*>(data)[i];
    case DType::bool_: return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

void store_element(DType t, void* data, std::size_t i, double v) {
  const DLDataType d = to_dlpack(t);
  gen::store(d.code, d.bits, data, i, v);  // the device runtimes' code too (init_values.h)
}

}  // namespace bb
