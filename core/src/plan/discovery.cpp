#include "plan/discovery.hpp"

#include <cctype>
#include <fstream>
#include <iterator>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "dynamic_library.hpp"
#include "plan/did_you_mean.hpp"

namespace bb {

namespace fs = std::filesystem;

std::string library_stem(const fs::path& library) { return library.stem().string(); }

bool python_names(const std::filesystem::path& file, const std::string& symbol) {
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find(symbol) != std::string::npos;
}

namespace {

bool not_found(const std::error_code& ec) {
  return ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory;
}

// Whether a .py file of `op`'s folder is an implementation: its text names `<op>_kernel_impl`
// or `<op>_reference` (read, never run: the host does not load Python; the worker that probes
// it imports it). gen_input.py and private modules (_name.py) are not; a helper module is not.
bool python_implementation(const fs::path& file, const std::string& op) {
  const std::string name = file.filename().string();
  if (name == "gen_input.py" || name.rfind('_', 0) == 0) return false;
  return python_names(file, op + "_kernel_impl") || python_names(file, op + "_reference");
}

// A Python file that is no implementation but defines a function whose name is a typo of one an
// implementation defines: what it defines and what it meant; "" for none.
std::string python_near_miss(const fs::path& file, const std::string& op) {
  const std::string name = file.filename().string();
  if (name == "gen_input.py" || name.rfind('_', 0) == 0) return "";
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::string> meant{op + "_kernel_impl", op + "_reference"};
  for (std::size_t at = text.find("def "); at != std::string::npos; at = text.find("def ", at + 4)) {
    if (at > 0 && text[at - 1] != '\n' && text[at - 1] != ' ' && text[at - 1] != '\t') continue;
    std::size_t end = at + 4;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    const std::string defined = text.substr(at + 4, end - at - 4);
    if (defined.empty()) continue;
    if (const std::string m = closest_name(defined, meant); !m.empty())
      return fmt::format("{}: defines '{}', not '{}': it is no implementation as it is (rename the function, or the file to _{} if it "
                         "is a helper)", file.string(), defined, m, name);
  }
  return "";
}

// The shared libraries and Python implementations of an op's folder, sorted by file name; an
// entry that is no regular file (a folder, a dangling link) is not one. Every call takes an
// error_code: a folder that cannot be listed is an error naming it, never an exception.
Expected<std::vector<fs::path>> libraries_in(const fs::path& dir, const std::string& op,
                                             std::vector<std::pair<fs::path, std::string>>& near_misses) {
  std::vector<fs::path> libraries;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    std::error_code st;
    const auto ext = it->path().extension();
    if (ext == DynamicLibrary::suffix() && it->is_regular_file(st)) libraries.push_back(it->path());
    else if (ext == ".py" && it->is_regular_file(st) && python_implementation(it->path(), op)) libraries.push_back(it->path());
    else if (ext == ".py" && it->is_regular_file(st))
      if (auto miss = python_near_miss(it->path(), op); !miss.empty()) near_misses.emplace_back(it->path(), std::move(miss));
  }
  if (ec) return make_error(fmt::format("{}: cannot read the op's folder: {}", dir.string(), ec.message()));
  std::sort(libraries.begin(), libraries.end(), [](const auto& a, const auto& b) { return a.filename().string() < b.filename().string(); });
  return libraries;
}

}  // namespace

Expected<std::vector<OpFolder>> discover_ops(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return make_error(fmt::format("{}: not a folder (expected a custom-ops root holding <op>/gen_input.yaml){}", root.string(),
                                  ec && !not_found(ec) ? ": " + ec.message() : ""));
  std::vector<OpFolder> ops;
  fs::directory_iterator it(root, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    OpFolder op;
    op.name = dir.filename().string();
    op.dir = dir;
    op.manifest = dir / "gen_input.yaml";
    std::error_code st;
    if (!it->is_directory(st)) {
      if (st && !not_found(st))  // an entry whose kind cannot be learnt may be an op's folder
        op.error = fmt::format("{}: cannot read the op's folder: {}", dir.string(), st.message());
      if (op.error.empty()) continue;
    } else {
      // A folder we may not look into (mode 000, say) cannot be told from an op's: it is
      // reported, as an op that cannot be used, rather than skipped in silence.
      auto manifest = fs::status(op.manifest, st);
      if (manifest.type() == fs::file_type::not_found) {
        // A BackendBench-py folder: its tests come from gen_input.py (generated_manifest.hpp).
        std::error_code py;
        if (const auto generator = fs::status(dir / "gen_input.py", py); generator.type() != fs::file_type::not_found) {
          op.manifest = dir / "gen_input.py";
          manifest = generator;
          st = py;
        }
      }
      if (manifest.type() == fs::file_type::not_found) continue;
      if (st) {
        op.error = fmt::format("{}: cannot read the op's folder: {}", dir.string(), st.message());
      } else {
        if (!fs::is_regular_file(manifest)) continue;
        auto libraries = libraries_in(dir, op.name, op.near_misses);
        if (libraries) op.libraries = std::move(*libraries);
        else op.error = libraries.error().message;
      }
    }
    ops.push_back(std::move(op));
  }
  if (ec) return make_error(fmt::format("{}: cannot read the custom-ops root: {}", root.string(), ec.message()));
  std::sort(ops.begin(), ops.end(), [](const OpFolder& a, const OpFolder& b) { return a.name < b.name; });
  return ops;
}

}  // namespace bb
