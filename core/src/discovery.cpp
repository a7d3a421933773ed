#include "discovery.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dynamic_library.hpp"

namespace bb {

std::string library_stem(const std::filesystem::path& library) { return library.stem().string(); }

Expected<std::vector<OpFolder>> discover_ops(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    return make_error(fmt::format("{}: not a folder (expected a custom-ops root holding <op>/gen_input.yaml)", root.string()));
  std::vector<OpFolder> ops;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    if (!entry.is_directory()) continue;
    const auto manifest = entry.path() / "gen_input.yaml";
    if (!std::filesystem::is_regular_file(manifest)) continue;
    OpFolder op;
    op.name = entry.path().filename().string();
    op.dir = entry.path();
    op.manifest = manifest;
    for (const auto& f : std::filesystem::directory_iterator(entry.path(), ec))
      if (f.is_regular_file() && f.path().extension() == DynamicLibrary::suffix()) op.libraries.push_back(f.path());
    std::sort(op.libraries.begin(), op.libraries.end(),
              [](const auto& a, const auto& b) { return a.filename().string() < b.filename().string(); });
    ops.push_back(std::move(op));
  }
  if (ec) return make_error(fmt::format("{}: {}", root.string(), ec.message()));
  std::sort(ops.begin(), ops.end(), [](const OpFolder& a, const OpFolder& b) { return a.name < b.name; });
  return ops;
}

}  // namespace bb
