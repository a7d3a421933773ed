#include "plugin_library.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <backendbench/detail/python_bridge.h>

#include "devices/device.hpp"
#include "devices/device_runtimes.hpp"
#include "dtype.hpp"
#include "plan/did_you_mean.hpp"

namespace bb {

std::string unknown_info_entries(const PluginInfo& info) {
  static const std::vector<std::string> kDevices = device_kind_names();
  std::vector<std::string> dtypes;
  for (DType t : all_dtypes()) dtypes.push_back(dtype_name(t));
  std::vector<std::string> problems;
  for (const auto& d : info.devices)
    if (std::find(kDevices.begin(), kDevices.end(), d) == kDevices.end())
      problems.push_back(fmt::format("device '{}' is no device{}, expected {}", d, did_you_mean(d, kDevices), device_kind_choices()));
  for (const auto& entry : info.dtypes) {
    const auto colon = entry.find(':');
    const std::string dtype = colon == std::string::npos ? entry : entry.substr(colon + 1);
    if (!parse_dtype(dtype))
      problems.push_back(fmt::format("dtype '{}'{} is no dtype{}, expected {}{}", dtype,
                                     colon == std::string::npos ? "" : " (of tensor '" + entry.substr(0, colon) + "')", did_you_mean(dtype, dtypes),
                                     dtype_names_list(), colon == std::string::npos ? " (or TENSOR:DTYPE)" : ""));
  }
  if (problems.empty()) return "";
  return fmt::format("its info record: {}; every case would be skipped: fix the record", fmt::join(problems, "; "));
}

namespace {

struct OpenBridge {
  DynamicLibrary library;
  const bb_python_bridge* bridge;
};

// The Python bridge, found beside the runtime plugins; `what` names the file that needs it.
Expected<OpenBridge> open_bridge(const std::string& what) {
  const std::string file = std::string("backendbench_python") + DynamicLibrary::suffix();
  std::filesystem::path found;
  for (const auto& d : runtime_plugin_dirs())
    if (std::error_code ec; std::filesystem::exists(std::filesystem::path(d) / file, ec)) {
      found = std::filesystem::path(d) / file;
      break;
    }
  if (found.empty())
    return make_error(fmt::format("{}: {}this build has no Python bridge ({} not found in {}; build with python3-dev installed)", what,
                                  kPythonUnavailable, file, fmt::join(runtime_plugin_dirs(), ", ")));
  auto lib = DynamicLibrary::open(found);
  if (!lib) return make_error(fmt::format("the Python bridge cannot be loaded: {}", lib.error().message));
  auto get = reinterpret_cast<bb_python_bridge_fn>(lib->symbol(BB_PYTHON_BRIDGE_SYMBOL));
  const bb_python_bridge* bridge = get ? get() : nullptr;
  if (!bridge || bridge->version != BB_PYTHON_BRIDGE_VERSION || bridge->struct_size < sizeof(bb_python_bridge))
    return make_error(fmt::format("{}: not the Python bridge this host speaks", found.string()));
  return OpenBridge{std::move(*lib), bridge};
}

// A BACKENDBENCH_INFO dict, as the bridge gives it in JSON.
PluginInfo python_info(const nlohmann::json& j) {
  PluginInfo info;
  if (!j.is_object()) return info;
  info.present = !j.empty();
  auto strings = [&](const char* key, std::vector<std::string>& out) {
    if (auto it = j.find(key); it != j.end() && it->is_array())
      for (const auto& v : *it)
        if (v.is_string()) out.push_back(v.get<std::string>());
  };
  strings("devices", info.devices);
  strings("dtypes", info.dtypes);
  strings("preconditions", info.preconditions);
  if (auto it = j.find("version"); it != j.end() && it->is_string()) info.version = it->get<std::string>();
  return info;
}

Expected<OpenBridge*> kept_bridge(const std::string& what) {
  static std::optional<OpenBridge> kept;  // the interpreter lives as long as the worker
  if (!kept) {
    auto opened = open_bridge(what);
    if (!opened) return opened.error();
    kept.emplace(std::move(*opened));
  }
  return &*kept;
}

// A .py implementation: the worker loads the Python bridge (never the host: discovery and
// planning only read file names) and the bridge imports the file.
Expected<PluginLibrary> load_python(const std::filesystem::path& path, const std::string& op) {
  auto opened = open_bridge(path.string() + ": a Python implementation");
  if (!opened) return opened.error();
  const bb_python_bridge* bridge = opened->bridge;
  auto lib = std::move(opened->library);
  PluginLibrary p{std::move(lib), nullptr, nullptr, {}, bridge};
  std::string info(4096, '\0'), error(16384, '\0');
  if (bridge->load(path.c_str(), op.c_str(), &p.kernel_impl, &p.reference, &p.backward_impl, &p.backward_reference, info.data(), info.size(),
                   error.data(), error.size()) != 0)
    return make_error(fmt::format("{}: cannot be imported:\n{}", path.string(), error.c_str()));
  const std::string impl_name = op + "_kernel_impl", ref_name = op + "_reference";
  if (!p.kernel_impl && !p.reference)
    return make_error(fmt::format("{}: defines neither {} nor {} (a function)", path.string(), impl_name, ref_name));
  p.info = python_info(nlohmann::json::parse(info.c_str(), nullptr, false));
  return p;
}

}  // namespace

bool is_python_implementation(const std::filesystem::path& path) { return path.extension() == ".py"; }

std::string start_python_bridge() {
  auto kept = kept_bridge("a Python implementation");
  if (!kept) return kept.error().message;
  std::string error(16384, '\0');
  if ((*kept)->bridge->start(error.data(), error.size()) != 0) return error.c_str();
  return "";
}

namespace {
const bb_python_bridge* started_bridge() {
  auto kept = kept_bridge("the warm interpreter");
  return kept ? (*kept)->bridge : nullptr;
}
}  // namespace

void python_before_fork() {
  if (auto* b = started_bridge()) b->before_fork();
}

void python_after_fork(bool child) {
  if (auto* b = started_bridge()) b->after_fork(child ? 1 : 0);
}

std::string python_become_worker(const std::vector<std::string>& environment) {
  auto* b = started_bridge();
  if (!b) return "no Python bridge";
  const std::string text = nlohmann::json(environment).dump();
  std::string error(16384, '\0');
  if (b->become_worker(text.c_str(), error.data(), error.size()) != 0) return error.c_str();
  return "";
}

std::vector<std::string> python_package_path() {
  auto* b = started_bridge();
  std::string text(1 << 16, '\0');
  if (!b || b->package_path(text.data(), text.size()) != 0) return {};
  const auto j = nlohmann::json::parse(text.c_str(), nullptr, false);
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& p : j)
      if (p.is_string()) out.push_back(p.get<std::string>());
  return out;
}

Expected<nlohmann::json> python_library(const std::string& function, const nlohmann::json& argument) {
  auto* b = started_bridge();
  if (!b) return make_error("no Python bridge");
  std::string out(1 << 20, '\0'), error(16384, '\0');
  if (b->library(function.c_str(), argument.dump().c_str(), out.data(), out.size(), error.data(), error.size()) != 0)
    return make_error(error.c_str());
  auto j = nlohmann::json::parse(out.c_str(), nullptr, false);
  if (j.is_discarded()) return make_error(function + ": an answer that could not be read");
  return j;
}

std::string generate_with_python(const std::filesystem::path& gen_input, const std::vector<std::filesystem::path>& candidates,
                                 const std::string& op, uint64_t seed, const std::filesystem::path& out_dir) {
  auto kept = kept_bridge(gen_input.string());
  if (!kept) return kept.error().message;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& c : candidates) files.push_back(c.string());
  std::string error(16384, '\0');
  if ((*kept)->bridge->generate(gen_input.c_str(), files.dump().c_str(), op.c_str(), seed, out_dir.c_str(), error.data(), error.size()) != 0)
    return fmt::format("{}: its tests could not be made:\n{}", gen_input.string(), error.c_str());
  return "";
}

Expected<PluginLibrary> load_plugin(const std::filesystem::path& path, const std::string& op) {
  if (is_python_implementation(path)) return load_python(path, op);
  auto lib = DynamicLibrary::open(path);
  if (!lib) return lib.error();
  PluginLibrary p{std::move(*lib), nullptr, nullptr, {}};
  const std::string impl_name = op + "_kernel_impl";
  const std::string ref_name = op + "_reference";
  p.kernel_impl = reinterpret_cast<bb_kernel_fn>(p.library.symbol(impl_name.c_str()));
  p.reference = reinterpret_cast<bb_kernel_fn>(p.library.symbol(ref_name.c_str()));
  p.backward_impl = reinterpret_cast<bb_kernel_fn>(p.library.symbol((op + "_backward_impl").c_str()));
  p.backward_reference = reinterpret_cast<bb_kernel_fn>(p.library.symbol((op + "_backward_reference").c_str()));
  if (!p.kernel_impl && !p.reference)
    return make_error(fmt::format("{}: missing symbol: exports neither {} nor {}", path.string(), impl_name, ref_name));

  if (auto fn = reinterpret_cast<bb_plugin_info_fn>(p.library.symbol(BB_PLUGIN_INFO_SYMBOL))) {
    const bb_plugin_info* info = fn();
    if (!info) return make_error(fmt::format("{}: {}() returned NULL", path.string(), BB_PLUGIN_INFO_SYMBOL));
    if (info->struct_size < offsetof(bb_plugin_info, abi_version) + sizeof(uint32_t))
      return make_error(fmt::format("{}: {}: struct_size {} is too small to be an info record", path.string(),
                                    BB_PLUGIN_INFO_SYMBOL, info->struct_size));
    p.info.present = true;
    p.info.abi_version = info->abi_version;
    if (BB_ABI_MAJOR_OF(info->abi_version) != BB_ABI_VERSION_MAJOR)
      return make_error(fmt::format("{}: ABI version {}.{} is not one this host speaks (expected {}.x)", path.string(),
                                    BB_ABI_MAJOR_OF(info->abi_version), info->abi_version & 0xffffu, BB_ABI_VERSION_MAJOR));
    auto strings = [&](int32_t n, const char* const* v, size_t end_of_field, std::vector<std::string>& out) -> Status {
      if (info->struct_size < end_of_field || n <= 0) return Ok{};
      if (!v || n > 64) return make_error(fmt::format("{}: info record lists {} entries but no array", path.string(), n));
      for (int32_t i = 0; i < n; ++i)
        if (v[i]) out.emplace_back(v[i]);
      return Ok{};
    };
    if (info->struct_size >= offsetof(bb_plugin_info, version) + sizeof(const char*) && info->version) p.info.version = info->version;
    if (auto s = strings(info->num_devices, info->devices, offsetof(bb_plugin_info, devices) + sizeof(void*), p.info.devices); !s)
      return s.error();
    if (auto s = strings(info->num_dtypes, info->dtypes, offsetof(bb_plugin_info, dtypes) + sizeof(void*), p.info.dtypes); !s)
      return s.error();
    if (auto s = strings(info->num_preconditions, info->preconditions, offsetof(bb_plugin_info, preconditions) + sizeof(void*),
                         p.info.preconditions);
        !s)
      return s.error();
  }
  return p;
}

namespace {

// The bridge's entries for `files`, each for its op of `ops` (one per file, or one for all).
nlohmann::json survey_entries(const std::vector<std::string>& files, const std::vector<std::string>& ops) {
  nlohmann::json entries = nlohmann::json::array();
  for (std::size_t k = 0; k < files.size(); ++k) entries.push_back({files[k], ops.size() == 1 ? ops.front() : ops[k]});
  return entries;
}

PythonSurvey survey_of(const nlohmann::json& e) {
  return {e.value("loaded", false), e.value("error", ""), e.value("has_kernel_impl", false), e.value("has_reference", false),
          python_info(e.value("info", nlohmann::json::object())), e.value("imports_packages", false)};
}

}  // namespace

Expected<std::vector<PythonSurvey>> survey_python(const std::vector<std::string>& files, const std::vector<std::string>& ops) {
  if (ops.size() != 1 && ops.size() != files.size()) return make_error("the Python survey needs one op, or one per file");
  auto kept = kept_bridge(files.empty() ? std::string("a Python file") : files.front());
  if (!kept) return kept.error();
  std::string out(1 << 20, '\0'), error(16384, '\0');
  if ((*kept)->bridge->survey(survey_entries(files, ops).dump().c_str(), ops.front().c_str(), out.data(), out.size(), error.data(), error.size()) != 0)
    return make_error(error.c_str());
  const auto j = nlohmann::json::parse(out.c_str(), nullptr, false);
  if (!j.is_array() || j.size() != files.size()) return make_error("the Python survey gave no answer that could be read");
  std::vector<PythonSurvey> found;
  for (const auto& e : j) found.push_back(survey_of(e));
  return found;
}

Expected<std::vector<std::optional<PythonSurvey>>> read_python(const std::vector<std::string>& files, const std::vector<std::string>& ops) {
  if (ops.size() != 1 && ops.size() != files.size()) return make_error("the Python survey needs one op, or one per file");
  auto kept = kept_bridge(files.empty() ? std::string("a Python file") : files.front());
  if (!kept) return kept.error();
  std::string out(1 << 20, '\0'), error(16384, '\0');
  if ((*kept)->bridge->read(survey_entries(files, ops).dump().c_str(), out.data(), out.size(), error.data(), error.size()) != 0)
    return make_error(error.c_str());
  const auto j = nlohmann::json::parse(out.c_str(), nullptr, false);
  if (!j.is_array() || j.size() != files.size()) return make_error("the Python files' reading gave no answer that could be read");
  std::vector<std::optional<PythonSurvey>> found;
  for (const auto& e : j) found.push_back(e.is_object() ? std::optional<PythonSurvey>(survey_of(e)) : std::nullopt);
  return found;
}

}  // namespace bb
