// A copy of every library a run used, kept by its content's sha256 under the cache
// (<cache>/libraries/<sha256>/<file name>), so that `compare --confirm` can time last night's
// code against tonight's, paired, after the root's files were replaced. Each content is kept
// once; a copy is made beside its final place and renamed into it, so a reader never sees half
// a file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "expected.hpp"

namespace bb {

std::filesystem::path library_store_root();  // device_cache_dir()/libraries

// Keeps a copy of `file`, whose sha256 is `sha256`; nothing when one is kept already.
Status keep_library(const std::filesystem::path& file, const std::string& sha256);

// Every plugin of a run's provenance (provenance.hpp) kept: the number kept now, or the first
// error (a run goes on without its copies: compare --confirm then says it cannot re-time).
Expected<int> keep_libraries(const std::filesystem::path& root, const nlohmann::json& provenance);

// The kept copy of the library with this sha256 and file name, if there is one.
std::optional<std::filesystem::path> kept_library(const std::string& sha256, const std::string& file_name);

}  // namespace bb
