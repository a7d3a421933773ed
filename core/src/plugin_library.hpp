// A plugin library of one op: its entry points and info record, checked against the host's ABI.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <backendbench/detail/python_bridge.h>
#include <backendbench/plugin.h>

#include "dynamic_library.hpp"
#include <nlohmann/json.hpp>

#include "expected.hpp"

namespace bb {

struct PluginInfo {
  bool present = false;  // the library exports backendbench_plugin_info
  uint32_t abi_version = BB_ABI_VERSION;
  std::string version;
  std::vector<std::string> devices;  // empty: the op's devices
  std::vector<std::string> dtypes;   // empty: every dtype (plugin.h says what an entry constrains)
  std::vector<std::string> preconditions;  // conditions every supported case meets (expr.hpp)
};

// What in an info record names no device or no dtype (a typo: "cpus", "bfloat"), each with the
// nearest known name; "" where every entry is known. An implementation whose record has one is
// unusable (its cases would be skipped without a word), in `check` and in a run alike.
std::string unknown_info_entries(const PluginInfo& info);

struct PluginLibrary {
  DynamicLibrary library;
  bb_kernel_fn kernel_impl = nullptr;  // <op>_kernel_impl, if exported
  bb_kernel_fn reference = nullptr;    // <op>_reference, if exported
  PluginInfo info;
  const bb_python_bridge* python = nullptr;  // a .py implementation's bridge: its calls return their results
  bb_kernel_fn backward_impl = nullptr;       // <op>_backward_impl, if exported (a .py file's: <op>_backward, or its forward's autograd)
  bb_kernel_fn backward_reference = nullptr;  // <op>_backward_reference, if exported
};

// Begins the reason a Python implementation cannot run on this machine (no Python bridge in
// this build, or no PyTorch for its interpreter): its tests are SKIPPED with it, as a GPU
// implementation's are where there is no GPU; an error of its own file is an error.
inline constexpr const char* kPythonUnavailable = "Python implementations cannot run on this machine: ";

// Whether `path` is a Python implementation (a .py file), loaded through the Python bridge.
bool is_python_implementation(const std::filesystem::path& path);

// A BackendBench-py folder's gen_input.py made into a manifest by the Python bridge (see
// backendbench/detail/python_bridge.h, generate): "" or why it could not be. Worker side.
std::string generate_with_python(const std::filesystem::path& gen_input, const std::vector<std::filesystem::path>& candidates,
                                 const std::string& op, uint64_t seed, const std::filesystem::path& out_dir);

// The Python bridge's interpreter started, PyTorch and Triton imported, before the worker
// knows which .py file it serves (a "warm" request): "" or why it could not start (each .py
// file's load then says it again). Worker side.
std::string start_python_bridge();
// Forking the started interpreter (the warm interpreter Python workers come from:
// worker/python_zygote_process.cpp): around the fork, in the one thread the process runs.
// No-ops where the bridge was not started.
void python_before_fork();
void python_after_fork(bool child);
// In the forked child, its walls up: `environment` ("NAME=value" each) becomes the process's
// and the interpreter's. "" or why it could not.
std::string python_become_worker(const std::vector<std::string>& environment);
// The started interpreter's sys.path; empty where none was started.
std::vector<std::string> python_package_path();
// The bridge's library work in the started interpreter ("scan_imports", "preimport": the
// bridge's header): its JSON answer, or why not.
Expected<nlohmann::json> python_library(const std::string& function, const nlohmann::json& argument);

// What a Python file defines, imported in a process of its own (the bridge's survey).
struct PythonSurvey {
  bool loaded = false;
  std::string error;
  bool has_kernel_impl = false, has_reference = false;
  PluginInfo info;
  bool imports_packages = false;  // read from its text: it imports an installed package (a kernel library)
};
// Every file of `files` surveyed by one interpreter that imports PyTorch once and forks a child
// per file, side by side (so that no file's import changes what another reports), each for its
// op of `ops` (one per file, or one for all). Worker side.
Expected<std::vector<PythonSurvey>> survey_python(const std::vector<std::string>& files, const std::vector<std::string>& ops);
// The same, read from each file's text (nothing of it runs, PyTorch is not imported): an entry
// where the text says it for certain, nullopt where the file must be imported to say.
Expected<std::vector<std::optional<PythonSurvey>>> read_python(const std::vector<std::string>& files, const std::vector<std::string>& ops);

// Loads `path` and resolves `<op>_kernel_impl`, `<op>_reference` and the info record. Errors:
// the library cannot be loaded (see DynamicLibrary), it exports neither entry point, or its info
// record declares an ABI major the host does not speak, or is malformed. A .py file is imported
// by the Python bridge (backendbench/detail/python_bridge.h): an import error's traceback is
// the error; its info record is the module's BACKENDBENCH_INFO.
Expected<PluginLibrary> load_plugin(const std::filesystem::path& path, const std::string& op);

}  // namespace bb
