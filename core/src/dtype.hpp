// Element types the host generates, compares and passes to plugins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dlpack/dlpack.h>

namespace bb {

enum class DType { float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, bool_ };

std::optional<DType> parse_dtype(std::string_view name);  // "float32", "fp16", "bf16", "int64", "bool", ...
const char* dtype_name(DType t);
std::size_t dtype_size(DType t);
bool is_floating(DType t);
DLDataType to_dlpack(DType t);
std::optional<DType> from_dlpack(DLDataType t);
const std::vector<DType>& all_dtypes();
std::string dtype_names_list();  // "float32, float64, ..." for messages

// Element i of a buffer of dtype t, widened to double (bool: 0/1; int64 beyond 2^53 loses bits).
double load_element(DType t, const void* data, std::size_t i);
// Stores v, converted to t (rounding to nearest even for 16-bit floats; saturating for ints).
void store_element(DType t, void* data, std::size_t i, double v);

}  // namespace bb
