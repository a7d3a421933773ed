#include <dlfcn.h>

#include <fmt/format.h>

#include "dynamic_library.hpp"

namespace bb {

namespace {
std::string classify(const std::string& path, const std::string& msg) {
  const std::string file = std::filesystem::path(path).filename().string();
  if (msg.find("undefined symbol") != std::string::npos || msg.find("symbol not found") != std::string::npos)
    return fmt::format("{}: unresolved symbol: {}", path, msg);
  if (msg.find("invalid ELF header") != std::string::npos || msg.find("file too short") != std::string::npos ||
      msg.find("not a mach-o file") != std::string::npos || msg.find("only ET_DYN and ET_EXEC") != std::string::npos)
    return fmt::format("{}: not a shared library ({})", path, msg);
  if (msg.find("wrong ELF class") != std::string::npos || msg.find("incompatible architecture") != std::string::npos)
    return fmt::format("{}: built for another architecture ({})", path, msg);
  if (msg.find("cannot open shared object file") != std::string::npos) {
    // dlerror names the first path component: the library itself, or the dependency missing.
    if (msg.rfind(path, 0) == 0 || msg.find(file + ":") == 0) return fmt::format("{}: cannot open ({})", path, msg);
    return fmt::format("{}: unresolved dependency: {}", path, msg);
  }
  return fmt::format("{}: cannot load: {}", path, msg);
}
}  // namespace

Expected<DynamicLibrary> DynamicLibrary::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(fmt::format("{}: no such file", path.string()));
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return make_error(classify(path.string(), e ? e : "unknown dlopen error"));
  }
  DynamicLibrary lib;
  lib.path_ = path;
  lib.handle_ = h;
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

const char* DynamicLibrary::suffix() {
#if defined(__APPLE__)
  return ".dylib";
#else
  return ".so";
#endif
}

}  // namespace bb
