// Windows variant of DynamicLibrary: LoadLibraryExW with the library's own folder searched for
// its dependencies (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR), the equivalent of RTLD_NOW | RTLD_LOCAL.
#include <windows.h>

#include <fmt/format.h>

#include "dynamic_library.hpp"

namespace bb {

namespace {
std::string last_error_text(DWORD code) {
  char* buf = nullptr;
  FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                 reinterpret_cast<LPSTR>(&buf), 0, nullptr);
  std::string s = buf ? buf : "unknown error";
  if (buf) LocalFree(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}
}  // namespace

Expected<DynamicLibrary> DynamicLibrary::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(fmt::format("{}: no such file", path.string()));
  HMODULE h = LoadLibraryExW(path.c_str(), nullptr, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!h) {
    const DWORD code = GetLastError();
    const std::string text = last_error_text(code);
    if (code == ERROR_BAD_EXE_FORMAT) return make_error(fmt::format("{}: not a shared library ({})", path.string(), text));
    if (code == ERROR_MOD_NOT_FOUND) return make_error(fmt::format("{}: unresolved dependency ({})", path.string(), text));
    if (code == ERROR_PROC_NOT_FOUND) return make_error(fmt::format("{}: unresolved symbol ({})", path.string(), text));
    return make_error(fmt::format("{}: cannot load ({})", path.string(), text));
  }
  DynamicLibrary lib;
  lib.path_ = path;
  lib.handle_ = reinterpret_cast<void*>(h);
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ ? reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle_), name)) : nullptr;
}

const char* DynamicLibrary::suffix() { return ".dll"; }

}  // namespace bb
