// Finding ops in a custom-ops root: every folder holding gen_input.yaml, in sorted order, with
// the shared libraries beside it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "expected.hpp"

namespace bb {

struct OpFolder {
  std::string name;
  std::filesystem::path dir;
  std::filesystem::path manifest;
  std::vector<std::filesystem::path> libraries;  // sorted by file name
};

Expected<std::vector<OpFolder>> discover_ops(const std::filesystem::path& root);

// "myop_cuda" for ".../myop_cuda.so".
std::string library_stem(const std::filesystem::path& library);

}  // namespace bb
