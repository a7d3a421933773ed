// Reading and writing NumPy .npy files (format versions 1-3, little-endian, C order).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "dtype.hpp"
#include "expected.hpp"

namespace bb {

struct NpyArray {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

Expected<NpyArray> read_npy(const std::filesystem::path& file);
// The same from a stream (seekable: the data's size is checked against the shape before it is
// read); `name` is what errors call it.
Expected<NpyArray> read_npy(std::istream& in, const std::string& name);
Status write_npy(const std::filesystem::path& file, DType dtype, const std::vector<int64_t>& shape, const void* data);

}  // namespace bb
