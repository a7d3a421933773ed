#include "run_files.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/results_stream.hpp"

namespace bb {

std::filesystem::path run_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  if (std::filesystem::exists(path / "results.json", ec)) return path / "results.json";
  if (std::filesystem::exists(path / "results.jsonl", ec)) return path / "results.jsonl";
  return path;
}

Expected<RunRecord> load_run(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (const auto file = run_file(path); file != path) return load_run(file);
    return make_error(fmt::format("{}: no results.json or results.jsonl in this folder", path.string()));
  }
  if (!std::filesystem::exists(path, ec)) return make_error(fmt::format("{}: no such file", path.string()));
  if (path.extension() == ".jsonl") return read_results_stream(path);
  std::ifstream in(path);
  if (!in) return make_error(fmt::format("{}: cannot read", path.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(fmt::format("{}: not valid JSON (truncated?): byte {}: {}", path.string(), e.byte, e.what()));
  }
  return run_from_json(j, path.string());
}

}  // namespace bb
