#include "run/workers/worker_walls.hpp"

#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include "devices/device.hpp"
#include "devices/device_kind.hpp"
#include "devices/device_runtimes.hpp"
#include "plugin_library.hpp"
#include "run/sweep_context.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/python_site.hpp"
#include "run/workers/sandbox.hpp"

namespace bb {

WorkerWalls walls_for(const SweepContext& ctx, const std::string& library, SlotDevice device) {
  return walls_for(ctx, library.empty() ? std::vector<std::string>{} : std::vector<std::string>{library}, device);
}

WorkerWalls walls_for(const SweepContext& ctx, const std::vector<std::string>& own, SlotDevice device) {
  WorkerWalls w = walls_for(ctx.options, ctx.log_dir, ctx.libraries, own);
  if (!device || !ctx.options.isolate) return w;
  const RuntimeRow& rt = *device.runtime;
  const auto kind = ctx.device_kinds.find(rt.name);
  const DeviceFacts* d = kind == ctx.device_kinds.end() ? nullptr : kind->second.device(device.ordinal);
  // A partition (a MIG instance) is named otherwise where visible_env names it: left as it is.
  const char* visible = std::getenv(rt.visible_env);
  const bool partition = d && rt.partition_word &&
                         (d->name.find(rt.partition_word) != std::string::npos || (visible && std::strstr(visible, rt.partition_word)));
  if (!d || d->uuid.rfind(rt.narrow_uuid_prefix, 0) != 0 || partition) return w;
  w.device_runtime = rt.name;
  w.device_uuid = d->uuid;
  w.device_ordinal = device.ordinal;
  return w;
}

WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::string& library) {
  return walls_for(o, log_dir, libraries, library.empty() ? std::vector<std::string>{} : std::vector<std::string>{library});
}

WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::vector<std::string>& own_libraries) {
  WorkerWalls w;
  w.spec.enabled = o.isolate;
  const std::string library = own_libraries.size() == 1 ? own_libraries.front() : "";
  w.python = is_python_implementation(library);
  if (w.python) w.python_file = library;
  if (!o.isolate) return w;  // in the host: no walls, and nothing to probe for them
  const auto& support = sandbox_support();
  std::error_code ec;
  if (!log_dir.empty()) w.spec.hidden_dirs.push_back(std::filesystem::absolute(log_dir, ec).string());
  for (const auto& d : {std::filesystem::weakly_canonical(o.root, ec), std::filesystem::path(o.worker_binary).parent_path()})
    if (!d.empty() && d != "/") w.spec.readonly_dirs.push_back(d.string());
  // The Python packages every Python worker imports (and the warm interpreter, unwalled, imported
  // before them): a worker run as uid 0 without capabilities could otherwise write into them.
  for (const auto& d : python_package_dirs())
    if (d != "/") w.spec.readonly_dirs.push_back(d);
  // Its filesystem view (landlock.hpp): the system's trees, the run's folders, the Python
  // packages and the folders the environment names for libraries and modules.
  // The binary itself, not its folder: a build tree holds copies of references (test roots).
  w.spec.landlock_read = landlock_system_dirs();
  for (const auto& d : {std::filesystem::weakly_canonical(o.root, ec), std::filesystem::weakly_canonical(o.worker_binary, ec)})
    if (!d.empty() && d != "/") w.spec.landlock_read.push_back(d.string());
  for (const auto& d : runtime_plugin_dirs()) w.spec.landlock_read.push_back(d);
  for (const auto& d : landlock_extra_dirs(false)) w.spec.landlock_read.push_back(d);
  for (const auto& d : python_site_dirs()) w.spec.landlock_read.push_back(d);
  for (const auto& d : python_package_dirs()) w.spec.landlock_read.push_back(d);
  for (const char* var : {"LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH"})
    if (const char* value = std::getenv(var))
      for (std::string_view rest = value; !rest.empty();) {
        const auto colon = rest.find(':');
        const std::filesystem::path dir{std::string(rest.substr(0, colon))};
        if (!dir.empty()) w.spec.landlock_read.push_back(std::filesystem::absolute(dir, ec).string());
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      }
  // What the root links to outside itself (a build's manifests, data and Python files are links
  // to the op's source folder: BackendBenchPlugin.cmake): those folders read-only too.
  const auto linked = linked_source_dirs(o.root, libraries, own_libraries);
  for (const auto& d : linked) {
    w.spec.readonly_dirs.push_back(d);
    w.spec.landlock_read.push_back(d);
  }
  std::set<std::filesystem::path> own;
  for (const auto& lib : own_libraries) own.insert(std::filesystem::weakly_canonical(lib, ec));
  for (const auto& lib : libraries) {
    const auto other = std::filesystem::weakly_canonical(lib, ec);
    if (!own.count(other)) w.spec.hidden_files.push_back(other.string());
  }
  // A user of its own where everything it must read is readable by others; else uid 0 without
  // any capability.
  if (support.drop_user) {
    const bool reachable = unreachable_for_workers(o, linked).empty();
    w.own_user = reachable;
    w.drop_capabilities = !reachable;
  }
  return w;
}

std::vector<std::string> linked_source_dirs(const std::filesystem::path& root, const std::vector<std::string>& libraries,
                                            const std::vector<std::string>& own_libraries) {
  std::error_code ec;
  const auto real_root = std::filesystem::weakly_canonical(root, ec);
  std::set<std::filesystem::path> op_dirs, found;
  for (const auto* list : {&libraries, &own_libraries})
    for (const auto& lib : *list) op_dirs.insert(std::filesystem::path(lib).parent_path());
  // No library named (a worker that probes the root's libraries): every op folder, every entry.
  const bool whole = libraries.empty() && own_libraries.empty();
  if (whole)
    for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) op_dirs.insert(it->path());
  auto inside = [&](const std::filesystem::path& p) {
    const auto rel = p.lexically_relative(real_root);
    return !real_root.empty() && !rel.empty() && *rel.begin() != "..";
  };
  for (const auto& dir : op_dirs) {
    std::vector<std::filesystem::path> entries = {dir / "gen_input.yaml", dir / "gen_input.py", dir / "data"};
    if (whole)
      for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    ec.clear();
    for (const auto* list : {&libraries, &own_libraries})
      for (const auto& lib : *list)
        if (std::filesystem::path(lib).parent_path() == dir) entries.emplace_back(lib);
    for (const auto& e : entries) {
      if (!std::filesystem::is_symlink(e, ec)) continue;
      const auto real = std::filesystem::canonical(e, ec);
      if (ec || inside(real)) continue;
      found.insert(std::filesystem::is_directory(real, ec) ? real : real.parent_path());
    }
  }
  std::vector<std::string> out;
  for (const auto& d : found)
    if (d != "/" && !d.empty()) out.push_back(d.string());
  return out;
}

std::string unreachable_for_workers(const SessionOptions& o, const std::vector<std::string>& linked) {
  std::error_code ec;
  std::vector<std::string> paths = {o.worker_binary, std::filesystem::absolute(o.root, ec).string()};
  paths.insert(paths.end(), linked.begin(), linked.end());
  for (const auto& dir : runtime_plugin_dirs())
    if (std::filesystem::exists(dir, ec)) paths.push_back(dir);
  for (const auto& dir : python_site_dirs()) paths.push_back(dir);
  for (const auto& p : paths)
    if (!others_can_reach(p)) return p;
  return "";
}

}  // namespace bb
