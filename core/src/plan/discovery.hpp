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
  std::filesystem::path manifest;  // gen_input.yaml; or a BackendBench-py folder's gen_input.py (generated_manifest.hpp)
  std::vector<std::filesystem::path> libraries;  // sorted by file name
  // Not empty: the folder could not be read (its mode, say), so whether it holds an op and what
  // is in it are unknown; the message names the folder and the OS error. Such an op is unusable
  // (plan_op returns this as its error); the others are not affected.
  std::string error;
  // Python files of the folder that define a near miss of `<op>_kernel_impl` or `<op>_reference`
  // (`myop_kernel_imp`) and so are no implementation: each an error naming the file and the
  // name, rather than a file ignored in silence (plan_op makes them failures).
  std::vector<std::pair<std::filesystem::path, std::string>> near_misses;
};

// Whether a Python file's text names `symbol` (read, never run: the host does not load Python).
bool python_names(const std::filesystem::path& file, const std::string& symbol);

// Never throws: a folder of the root that cannot be read is an OpFolder with an error; only a
// root that is no folder, or cannot be listed, is an error of the whole call.
Expected<std::vector<OpFolder>> discover_ops(const std::filesystem::path& root);

// "myop_cuda" for ".../myop_cuda.so".
std::string library_stem(const std::filesystem::path& library);

}  // namespace bb
