// A loaded shared library. Opened with RTLD_NOW | RTLD_LOCAL (LoadLibraryEx on Windows) so that
// any number of libraries may export the same names; never unloaded during a run.
#pragma once

#include <filesystem>
#include <string>

#include "expected.hpp"

namespace bb {

class DynamicLibrary {
 public:
  // Errors say which of these went wrong: not a shared library, an unresolved dependency, an
  // unresolved symbol, or the file cannot be read.
  static Expected<DynamicLibrary> open(const std::filesystem::path& path);

  void* symbol(const char* name) const;  // nullptr when absent
  const std::filesystem::path& path() const { return path_; }

  // The platform's shared-library suffix: ".so", ".dylib" or ".dll".
  static const char* suffix();

 private:
  std::filesystem::path path_;
  void* handle_ = nullptr;
};

}  // namespace bb
