#include "plan/library_store.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "measure/device_peak.hpp"

namespace bb {

std::filesystem::path library_store_root() { return device_cache_dir() / "libraries"; }

Status keep_library(const std::filesystem::path& file, const std::string& sha256) {
  if (sha256.size() != 64 || sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    return make_error(fmt::format("{}: no sha256 to keep it by", file.string()));
  namespace fs = std::filesystem;
  const fs::path dir = library_store_root() / sha256;
  const fs::path dest = dir / file.filename();
  std::error_code ec;
  if (fs::exists(dest, ec)) return Ok{};
  fs::create_directories(dir, ec);
  if (ec) return make_error(fmt::format("{}: {}", dir.string(), ec.message()));
  const fs::path tmp = dir / fmt::format(".{}.tmp.{}", file.filename().string(), getpid());
  fs::copy_file(file, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, dest, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return make_error(fmt::format("keeping a copy of {} in {}: {}", file.string(), dir.string(), ec.message()));
  }
  return Ok{};
}

Expected<int> keep_libraries(const std::filesystem::path& root, const nlohmann::json& provenance) {
  int kept = 0;
  for (const auto& p : provenance.value("plugins", nlohmann::json::array())) {
    const std::string sha = p.value("sha256", nlohmann::json()).is_string() ? p["sha256"].get<std::string>() : "";
    if (sha.empty()) continue;
    std::filesystem::path file = p.value("path", "");
    if (file.is_relative()) file = root / file;
    std::error_code ec;
    if (std::filesystem::exists(library_store_root() / sha / file.filename(), ec)) continue;
    if (auto s = keep_library(file, sha); !s) return s.error();
    ++kept;
  }
  return kept;
}

std::optional<std::filesystem::path> kept_library(const std::string& sha256, const std::string& file_name) {
  if (sha256.size() != 64 || sha256.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  const auto p = library_store_root() / sha256 / std::filesystem::path(file_name).filename();
  std::error_code ec;
  if (std::filesystem::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

}  // namespace bb
