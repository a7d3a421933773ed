#include "npy.hpp"

#include <cstring>
#include <fstream>
#include <regex>

#include <fmt/format.h>

namespace bb {

namespace {
struct Descr {
  const char* code;
  DType type;
};
constexpr Descr kDescrs[] = {{"f4", DType::float32}, {"f8", DType::float64}, {"f2", DType::float16},
                             {"i1", DType::int8},    {"i2", DType::int16},   {"i4", DType::int32},
                             {"i8", DType::int64},   {"u1", DType::uint8},   {"b1", DType::bool_}};
}  // namespace

Expected<NpyArray> read_npy(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot open the .npy file", file.string()));
  return read_npy(in, file.string());
}

Expected<NpyArray> read_npy(std::istream& in, const std::string& name) {
  const auto start = in.tellg();
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  in.seekg(start);
  const uint64_t available = start >= 0 && end >= start ? static_cast<uint64_t>(end - start) : 0;
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return make_error(fmt::format("{}: not a .npy file (expected the \\x93NUMPY magic)", name));
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    uint8_t b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    uint8_t b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return make_error(fmt::format("{}: .npy format version {} is not supported (expected 1, 2 or 3)", name, major));
  }
  if (!in || header_len > (1u << 20)) return make_error(fmt::format("{}: truncated .npy header", name));
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return make_error(fmt::format("{}: truncated .npy header", name));

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([<>|=])([a-z]\d+)')")))
    return make_error(fmt::format("{}: .npy header has no 'descr'", name));
  if (m[1] == ">") return make_error(fmt::format("{}: big-endian .npy data is not supported", name));
  NpyArray arr;
  bool found = false;
  for (const auto& d : kDescrs)
    if (m[2] == d.code) arr.dtype = d.type, found = true;
  if (!found) return make_error(fmt::format("{}: .npy dtype '{}' is not supported (expected f2 f4 f8 i1 i2 i4 i8 u1 b1)", name, m[2].str()));
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)")))
    return make_error(fmt::format("{}: Fortran-ordered .npy data is not supported; save it C-contiguous", name));
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    return make_error(fmt::format("{}: .npy header has no 'shape'", name));
  std::string dims = m[1];
  std::regex num(R"(\d+)");
  // The data must be in the file: a shape that says more (or overflows) is refused before
  // anything is allocated.
  uint64_t n = 1;
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it) {
    const std::string digits = it->str();
    if (digits.size() > 15) return make_error(fmt::format("{}: .npy dimension {} is too large", name, digits));
    const uint64_t d = std::stoull(digits);
    if (d != 0 && n > available / d) n = available + 1;  // more elements than bytes: cannot be there
    else n *= d;
    arr.shape.push_back(static_cast<int64_t>(d));
  }
  const uint64_t header_bytes = 6 + 2 + (major == 1 ? 2 : 4) + header_len;
  const uint64_t left = available > header_bytes ? available - header_bytes : 0;
  if (n > left / dtype_size(arr.dtype))
    return make_error(fmt::format("{}: .npy data is shorter than its shape says ({} elements of {} bytes, {} bytes in the file)", name,
                                  n > available ? std::string("more") : std::to_string(n), dtype_size(arr.dtype), left));
  arr.data.resize(static_cast<size_t>(n) * dtype_size(arr.dtype));
  if (!in.read(reinterpret_cast<char*>(arr.data.data()), static_cast<std::streamsize>(arr.data.size())))
    return make_error(fmt::format("{}: .npy data is shorter than its shape says ({} bytes expected)", name, arr.data.size()));
  return arr;
}

Status write_npy(const std::filesystem::path& file, DType dtype, const std::vector<int64_t>& shape, const void* data) {
  const char* code = nullptr;
  for (const auto& d : kDescrs)
    if (d.type == dtype) code = d.code;
  if (!code) return make_error(fmt::format("{}: dtype {} has no .npy code", file.string(), dtype_name(dtype)));
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += fmt::format("{}{}", shape[i], (shape.size() == 1 || i + 1 < shape.size()) ? "," : "");
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': ({}), }}",
                                   dtype_size(dtype) == 1 ? "|" : "<", code, dims);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(file, std::ios::binary);
  if (!out) return make_error(fmt::format("{}: cannot write", file.string()));
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char lb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lb, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(static_cast<size_t>(n) * dtype_size(dtype)));
  if (!out) return make_error(fmt::format("{}: write failed", file.string()));
  return Ok{};
}

}  // namespace bb
