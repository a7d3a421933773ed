// A file's SHA-256 (OpenSSL where the build has it): what provenance records of every manifest
// and library, and what keys the plan's and a generated manifest's caches.
#pragma once

#include <filesystem>
#include <string>

#include "expected.hpp"

namespace bb {

// The file's SHA-256, as 64 hex digits.
Expected<std::string> sha256_file(const std::filesystem::path& file);

}  // namespace bb
