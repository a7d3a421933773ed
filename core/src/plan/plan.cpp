#include "plan/plan.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <atomic>
#include <future>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "plan/backward_case.hpp"
#include "plan/check_backwards.hpp"
#include "plan/file_digest.hpp"
#include "plan/generated_manifest.hpp"
#include "plugin_library.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/workers/python_site.hpp"
#include "trace.hpp"

namespace bb {

Target ReferenceChoice::target(Mode mode) const {
  // A backward without one of its own: finite differences of its forward (finite_differences.hpp).
  const Target::Pass pass = !needs_backward(mode) || has_backward ? pass_of(mode)
                            : mode == Mode::bwd                   ? Target::Pass::differences
                                                                  : Target::Pass::pair_differences;
  switch (kind) {
    case Kind::library: return Target{Target::Kind::reference, library.string(), pass};
    case Kind::implementation: return Target{Target::Kind::kernel_impl, library.string(), pass};
    case Kind::identity: return Target{Target::Kind::identity, ""};
  }
  return Target{};
}

namespace {

using LibraryInfo = std::pair<std::filesystem::path, PluginInfo>;

// The library that serves as the reference, of those exporting <op>_reference (`references`):
// the one the manifest names (`reference: FILE`), else the only one; none: precedence goes on
// (the first implementation, then identity). Errors: the manifest names no library of the folder,
// one that could not be used or one without the symbol (file:line); two or more export it and the
// manifest names none.
Expected<std::optional<LibraryInfo>> choose_reference(const OpFolder& folder, const Manifest& m, const std::vector<LibraryInfo>& references,
                                                      const std::vector<LoadFailure>& failures) {
  std::vector<std::string> exporting;
  for (const auto& r : references) exporting.push_back(r.first.filename().string());
  const std::string symbol = folder.name + "_reference";
  if (!m.reference.empty()) {
    const std::string where = m.where(m.reference_line);
    auto named = [&](const std::filesystem::path& p) { return p.filename().string() == m.reference || library_stem(p) == m.reference; };
    auto lib = std::find_if(folder.libraries.begin(), folder.libraries.end(), named);
    if (lib == folder.libraries.end())
      return make_error(fmt::format("{}: reference '{}' is no library of {}; expected the file name or stem of the library exporting "
                                    "{} ({})",
                                    where, m.reference, folder.dir.string(), symbol,
                                    exporting.empty() ? "none does" : fmt::format("{}", fmt::join(exporting, ", "))));
    if (auto f = std::find_if(failures.begin(), failures.end(), [&](const LoadFailure& f) { return f.library == *lib; }); f != failures.end())
      return make_error(fmt::format("{}: reference '{}' cannot be used: {}", where, m.reference, f->error));
    auto r = std::find_if(references.begin(), references.end(), [&](const LibraryInfo& r) { return r.first == *lib; });
    if (r == references.end())
      return make_error(fmt::format("{}: reference '{}': {} does not export {}", where, m.reference, lib->filename().string(), symbol));
    return std::optional<LibraryInfo>(*r);
  }
  if (references.size() > 1)
    return make_error(fmt::format("{}: {} libraries export {}: {}; one reference per op: name the trusted one in {} with "
                                  "'reference: FILE' (docs/MANIFEST.md)",
                                  folder.name, references.size(), symbol, fmt::join(exporting, ", "), m.path.string()));
  if (references.empty()) return std::optional<LibraryInfo>();
  return std::optional<LibraryInfo>(references.front());
}

}  // namespace

namespace {

// What the manifest declares of its implementations (`implementations:`) joins their info
// records. Every precondition is evaluated on every case now: one that cannot be (an unknown
// name, a division by zero) makes its library unusable, with where it was declared and why.
void declare_from_manifest(OpPlan& plan, std::vector<Implementation>& impls) {
  const Manifest& m = plan.manifest;
  for (const auto& d : m.implementations) {
    auto it = std::find_if(impls.begin(), impls.end(), [&](const Implementation& i) { return i.name == d.name || i.stem == d.name; });
    if (it == impls.end()) {
      std::vector<std::string> names;
      for (const auto& i : impls) names.push_back(i.stem);
      plan.warnings.push_back(fmt::format("{}: implementations: '{}' is no implementation of {} here ({}); its declaration is not used",
                                          m.where(d.line), d.name, plan.folder.name, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
      continue;
    }
    for (const auto& p : d.preconditions) it->info.preconditions.push_back(p.text);
    it->info.dtypes.insert(it->info.dtypes.end(), d.dtypes.begin(), d.dtypes.end());
  }
  auto source = [&](const Implementation& impl, const std::string& text) {
    for (const auto& d : m.implementations)
      if (d.name == impl.name || d.name == impl.stem)
        for (const auto& p : d.preconditions)
          if (p.text == text) return m.where(p.line);
    return fmt::format("{}: its info record", impl.library.string());
  };
  for (auto it = impls.begin(); it != impls.end();) {
    std::string error;
    for (const auto& p : it->info.preconditions) {
      for (const auto& c : plan.cases)
        if (auto ok = meets(c, p); !ok) {
          error = fmt::format("{}: precondition '{}' of {}: {} (case {}); expected a condition on the case's parameters and tensors "
                              "(docs/MANIFEST.md, Preconditions)",
                              source(*it, p), p, it->name, ok.error().message, c.id);
          break;
        }
      if (!error.empty()) break;
    }
    if (error.empty()) {
      ++it;
      continue;
    }
    plan.failures.push_back({it->library, error});
    it = impls.erase(it);
  }
}

// Python files surveyed by one worker (the bridge's survey: PyTorch imported once, a child per
// file): each loaded file's probe reply, by path. A file that failed there, or whose batch died,
// is not among them (it is probed again alone). With `read`, each file's text is read first
// (nothing of it runs, no PyTorch: a kernel library can take seconds to import) and only those
// whose text does not say for certain what they define are imported.
std::map<std::string, nlohmann::json> survey_batch(Executor& executor, std::vector<std::string> files, std::vector<std::string> ops, double probe_timeout,
                                                   bool read) {
  std::map<std::string, nlohmann::json> found;
  auto ask = [&](WorkerCommand cmd, double timeout) {
    executor.recycle();
    ExecOutcome out = executor.execute(cmd == WorkerCommand::read_many ? request_json(ReadManyRequest{files, ops}) : request_json(ProbeManyRequest{files, ops}), timeout);
    executor.recycle();
    auto probes = out.status == ExecOutcome::Status::ok ? out.reply.value("probes", nlohmann::json::array()) : nlohmann::json::array();
    return probes.size() == files.size() ? probes : nlohmann::json::array();
  };
  if (read && !files.empty()) {
    const auto probes = ask(WorkerCommand::read_many, probe_timeout);
    std::vector<std::string> left, left_ops;
    for (std::size_t j = 0; j < files.size(); ++j) {
      if (j < probes.size() && probes[j].is_object() && probes[j].value("loaded", false)) {
        found[files[j]] = probes[j];
        continue;
      }
      left.push_back(files[j]);
      if (ops.size() > 1) left_ops.push_back(ops[j]);
    }
    if (tracing()) trace_line({{"side", "plan"}, {"what", "python_read"}, {"files", files.size()}, {"to_import", left.size()}});
    files = std::move(left);
    if (ops.size() > 1) ops = std::move(left_ops);
    if (files.empty()) return found;
  }
  // The files import side by side: a batch takes about its slowest file's import, not their sum.
  const auto probes = ask(WorkerCommand::probe_many, probe_timeout * (1.0 + 0.25 * static_cast<double>(files.size())));
  for (std::size_t j = 0; j < probes.size(); ++j)
    if (probes[j].is_object() && probes[j].value("loaded", false)) found[files[j]] = probes[j];
  return found;
}

// Whether the plan imports Python file `l` of `folder` up front: every one, unless --impls
// names others (then only those, and the reference).
bool surveyed_up_front(const OpFolder& folder, const std::filesystem::path& l, const std::vector<std::string>& selected) {
  if (!is_python_implementation(l)) return false;
  const std::string stem = library_stem(l);
  return selected.empty() || stem == folder.name + "_reference" ||
         std::any_of(selected.begin(), selected.end(), [&](const std::string& s) { return s == stem || s == folder.name + "__" + stem; });
}

constexpr std::size_t kSurveyPerWorker = 8;  // the bridge binds 16 functions a process

}  // namespace

std::map<std::string, nlohmann::json> survey_sweep(const std::vector<OpFolder>& folders, Executor& executor, const PlanOptions& options) {
  std::vector<std::string> files, ops;
  for (const auto& f : folders)
    if (f.error.empty())
      for (const auto& l : f.libraries)
        if (surveyed_up_front(f, l, options.selected)) {
          files.push_back(l.string());
          ops.push_back(f.name);
        }
  std::map<std::string, nlohmann::json> surveyed;
  if (files.empty()) return surveyed;
  // Batches of the bridge's size, spread over as many workers as the plan may use at once.
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(1, options.parallel)), 1,
                                                      (files.size() + kSurveyPerWorker - 1) / kSurveyPerWorker);
  const std::size_t per = (files.size() + workers - 1) / workers;
  std::vector<std::map<std::string, nlohmann::json>> found(workers);
  auto batch = [&](Executor& ex, std::size_t w) {
    const std::size_t first = w * per, last = std::min(files.size(), first + per);
    for (std::size_t b = first; b < last; b += kSurveyPerWorker) {
      const auto end = static_cast<std::ptrdiff_t>(std::min(last, b + kSurveyPerWorker));
      found[w].merge(survey_batch(ex, {files.begin() + static_cast<std::ptrdiff_t>(b), files.begin() + end},
                                  {ops.begin() + static_cast<std::ptrdiff_t>(b), ops.begin() + end}, options.probe_timeout, options.read_python));
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers && options.make_executor; ++w) try {
      threads.emplace_back([&, w] {
        auto ex = options.make_executor();  // made, used and ended on this thread (executor.hpp)
        batch(*ex, w);
      });
    } catch (const std::system_error&) {  // no thread: this one surveys it below
      batch(executor, w);
    }
  batch(executor, 0);
  if (!options.make_executor)
    for (std::size_t w = 1; w < workers; ++w) batch(executor, w);
  for (auto& t : threads) t.join();
  for (auto& m : found) surveyed.merge(m);
  return surveyed;
}

namespace {

// A BackendBench-py folder: its tests made into a manifest first, while its Python files are
// surveyed in a worker beside (both import PyTorch: one after the other, they doubled the plan).
// Those --impls names, and the reference, only: a file it leaves out is not imported at all.
Status generate_manifest(const OpFolder& folder, Executor& executor, const PlanOptions& options, OpPlan& plan,
                         std::map<std::string, nlohmann::json>& surveyed) {
  std::future<std::map<std::string, nlohmann::json>> early;
  std::vector<std::string> files;
  for (const auto& l : folder.libraries)
    if (surveyed_up_front(folder, l, options.selected) && !options.surveyed) files.push_back(l.string());
  if (options.make_executor && options.parallel > 1 && files.size() > 1)
    try {
      early = std::async(std::launch::async, [&] {
        auto ex = options.make_executor();  // made, used and ended on this thread (executor.hpp)
        return survey_batch(*ex, files, {folder.name}, options.probe_timeout, options.read_python);
      });
    } catch (const std::system_error&) {  // no thread: surveyed below, as any folder's
    }
  auto made = generated_manifest(folder, executor, options.seed, std::max(60.0, options.probe_timeout));
  if (early.valid()) surveyed.merge(early.get());
  if (!made) return made.error();
  plan.folder.manifest = *made;
  return Ok{};
}

// The folder's libraries less the Python files --impls leaves out, where they cannot serve as
// the reference or a baseline.
OpFolder chosen_libraries(const OpFolder& folder, const OpPlan& plan, const PlanOptions& options) {
  OpFolder chosen = folder;
  if (options.selected.empty()) return chosen;
  const bool has_reference = !plan.manifest.reference.empty() || std::any_of(folder.libraries.begin(), folder.libraries.end(), [&](const auto& l) {
    return l.stem() == folder.name + "_reference";
  });
  auto named = [&](const std::filesystem::path& l) {
    const std::string stem = library_stem(l);
    for (const auto& s : options.selected)
      if (s == stem || s == folder.name + "__" + stem) return true;
    for (const auto& [device, b] : plan.manifest.baselines)
      if (b == stem || b == folder.name + "__" + stem) return true;
    return plan.manifest.baseline == stem || plan.manifest.baseline == folder.name + "__" + stem;
  };
  auto skip = [&](const std::filesystem::path& l) {
    return has_reference && is_python_implementation(l) && !named(l) && !python_names(l, folder.name + "_reference");
  };
  chosen.libraries.erase(std::remove_if(chosen.libraries.begin(), chosen.libraries.end(), skip), chosen.libraries.end());
  return chosen;
}

// Each library probed in a fresh worker, so static initialisers cannot leak; with make_executor,
// several at once. Python files first, several to a worker (importing PyTorch takes a second or
// two): a file that fails there, or whose batch dies, is probed again alone, so that no file's
// import can make another's fail.
std::vector<ExecOutcome> probe_libraries(const OpFolder& f, const OpFolder& folder, Executor& executor, const PlanOptions& options,
                                         const std::map<std::string, nlohmann::json>& surveyed) {
  std::vector<ExecOutcome> outcomes(f.libraries.size());
  auto probe = [&](Executor& ex, std::size_t k) {
    ex.recycle();
    outcomes[k] = ex.execute(request_json(ProbeRequest{f.libraries[k].string(), folder.name}), options.probe_timeout);
    ex.recycle();
  };
  std::vector<bool> alone(f.libraries.size(), true);
  {
    std::vector<std::size_t> py;
    for (std::size_t k = 0; k < f.libraries.size(); ++k) {
      if (!is_python_implementation(f.libraries[k])) continue;
      if (auto it = surveyed.find(f.libraries[k].string()); it != surveyed.end()) {
        outcomes[k].reply = it->second;
        alone[k] = false;
        continue;
      }
      py.push_back(k);
    }
    for (std::size_t first = 0; py.size() > 1 && first < py.size(); first += kSurveyPerWorker) {
      const std::vector<std::size_t> batch(py.begin() + static_cast<std::ptrdiff_t>(first),
                                           py.begin() + static_cast<std::ptrdiff_t>(std::min(py.size(), first + kSurveyPerWorker)));
      std::vector<std::string> libraries;
      for (auto k : batch) libraries.push_back(f.libraries[k].string());
      const auto found = survey_batch(executor, libraries, {folder.name}, options.probe_timeout, options.read_python);
      for (auto k : batch)
        if (auto it = found.find(f.libraries[k].string()); it != found.end()) {
          outcomes[k].reply = it->second;
          alone[k] = false;
        }
    }
  }
  std::vector<std::size_t> todo;
  for (std::size_t k = 0; k < f.libraries.size(); ++k)
    if (alone[k]) todo.push_back(k);
  if (options.make_executor && options.parallel > 1 && todo.size() > 1) {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    const auto n = std::min<std::size_t>(static_cast<std::size_t>(options.parallel), todo.size());
    for (std::size_t t = 0; t < n; ++t)
      threads.emplace_back([&] {
        auto ex = options.make_executor();
        for (std::size_t j = next++; j < todo.size(); j = next++) probe(*ex, todo[j]);
      });
    for (auto& t : threads) t.join();
  } else {
    for (auto k : todo) probe(executor, k);
  }
  return outcomes;
}

// What the probes found: the implementations, those unavailable here, the libraries exporting
// the reference, and every usable library's info.
struct Probed {
  std::vector<Implementation> impls, unavailable;
  std::vector<std::pair<std::filesystem::path, PluginInfo>> references;
  std::map<std::string, PluginInfo> infos;  // by stem
  std::set<std::string> backward_impls, backward_references;  // stems exporting <op>_backward_impl, _reference
  std::vector<std::pair<std::filesystem::path, std::string>> contents;  // (library, sha256) of those in use
};

// One library's probe: a failure, a warning, or what it serves as.
void read_probe(const OpFolder& folder, const std::filesystem::path& lib, const ExecOutcome& out, const PlanOptions& options, OpPlan& plan,
                Probed& found) {
  auto& contents = found.contents;
  if (out.status == ExecOutcome::Status::timed_out) {
    plan.failures.push_back({lib, fmt::format("{}: did not finish loading in {:.0f} s (a static initialiser that never returns?); "
                                              "the worker was killed", lib.string(), options.probe_timeout)});
    return;
  }
  if (out.status != ExecOutcome::Status::ok) {
    plan.failures.push_back({lib, fmt::format("{}: crashed while loading: {}", lib.string(), out.detail)});
    return;
  }
  // Names must say which op and which library: '__' joins the two.
  if (library_stem(lib).find("__") != std::string::npos) {
    plan.failures.push_back({lib, fmt::format("{}: the name '{}' contains '__', which separates the op from the implementation in "
                                              "'{}__<name>'; rename the library",
                                              lib.string(), library_stem(lib), folder.name)});
    return;
  }
  // The same file under two names (a link) is one implementation, run once; a copy (the same
  // bytes in another file) is a second implementation, and the plan says so.
  std::error_code ec;
  const auto real = std::filesystem::canonical(lib, ec);
  auto same_file = std::find_if(contents.begin(), contents.end(), [&](const auto& c) { return !ec && c.first == real; });
  if (same_file != contents.end()) {
    plan.failures.push_back({lib, fmt::format("{}: the same library as {} (a link to it); it is not run twice", lib.string(),
                                              same_file->first.filename().string())});
    return;
  }
  auto hash = sha256_file(lib);
  if (hash)
    for (const auto& [other, h] : contents)
      if (h == *hash)
        plan.warnings.push_back(fmt::format("{}: {} has the same bytes as {}: two names for one implementation", folder.name,
                                            lib.filename().string(), other.filename().string()));
  contents.emplace_back(ec ? lib : real, hash ? *hash : std::string());
  ProbeReply reply = probe_reply_from_json(out.reply);
  if (!reply.loaded && reply.unavailable) {  // SKIPPED, with why; never the reference
    const auto at = reply.error.find(kPythonUnavailable);
    found.unavailable.push_back({folder.name + "__" + library_stem(lib), library_stem(lib), lib, {}, "", reply.error.substr(at)});
    return;
  }
  if (!reply.loaded) {
    plan.failures.push_back({lib, reply.error});
    return;
  }
  if (const auto why = unknown_info_entries(reply.info); !why.empty()) {
    plan.failures.push_back({lib, fmt::format("{}: {}", lib.string(), why)});
    return;
  }
  found.infos[library_stem(lib)] = reply.info;
  if (reply.has_backward_impl) found.backward_impls.insert(library_stem(lib));
  if (reply.has_backward_reference) found.backward_references.insert(library_stem(lib));
  if (reply.has_reference) found.references.emplace_back(lib, reply.info);
  if (reply.has_kernel_impl) {
    Implementation impl;
    impl.name = folder.name + "__" + library_stem(lib);
    impl.stem = library_stem(lib);
    impl.library = lib;
    impl.info = reply.info;
    impl.imports_packages = reply.imports_packages;
    impl.has_backward = reply.has_backward_impl;
    found.impls.push_back(std::move(impl));
  }
}

// One reference per op, on purpose: the manifest's `reference:` names it, else the one library
// exporting <op>_reference. Two or more with no name is an error (a library that sorts first
// must not take the reference over); a library that serves as the reference is not scored.
Status pick_reference(const OpFolder& folder, Probed& found, OpPlan& plan) {
  auto& impls = found.impls;
  const auto& references = found.references;
  auto reference = choose_reference(folder, plan.manifest, references, plan.failures);
  if (!reference) return reference.error();
  if (*reference) {
    const auto& [path, info] = **reference;
    plan.reference = {ReferenceChoice::Kind::library, path, library_stem(path), info, found.backward_references.count(library_stem(path)) > 0};
    auto self = std::find_if(impls.begin(), impls.end(), [&](const Implementation& i) { return i.library == path; });
    if (self != impls.end()) {
      plan.warnings.push_back(fmt::format("{}: {} exports both {}_kernel_impl and {}_reference; it serves as the reference, so its "
                                          "implementation {} is not scored (against itself)",
                                          folder.name, path.filename().string(), folder.name, folder.name, self->name));
      impls.erase(self);
    }
    for (const auto& [other, other_info] : references)
      if (other != path && std::none_of(impls.begin(), impls.end(), [&](const Implementation& i) { return i.library == other; }))
        plan.warnings.push_back(fmt::format("{}: {} exports {}_reference too; {} names {} as the reference, so it is not used", folder.name,
                                            other.filename().string(), folder.name, plan.manifest.where(plan.manifest.reference_line),
                                            path.filename().string()));
  } else if (!impls.empty()) {
    plan.reference = {ReferenceChoice::Kind::implementation, impls.front().library, impls.front().name, impls.front().info, impls.front().has_backward};
    plan.warnings.push_back(fmt::format("{}: no library exports {}_reference; {} serves as the reference and is not scored",
                                        folder.name, folder.name, impls.front().name));
    impls.erase(impls.begin());
  } else {
    plan.reference = {ReferenceChoice::Kind::identity, {}, "identity", {}};
    plan.reference.info.devices = {std::string(kCpuDevice)};
    plan.warnings.push_back(fmt::format("{}: no reference and no implementation; identity passthrough (output = copy of input '{}') serves as the reference",
                                        folder.name, plan.manifest.inputs.front().name));
  }
  return Ok{};
}

// A baseline: the reference by default, or the implementation the manifest names; for
// `want_device` where the manifest gives one per device.
Status resolve_baseline(const OpFolder& folder, const Probed& found, const std::string& b, const std::string& want_device, OpPlan& plan) {
  const auto& infos = found.infos;
  Baseline out;
  if (b == "reference" || b.empty()) {
    if (plan.reference.kind == ReferenceChoice::Kind::identity) {
      plan.warnings.push_back(fmt::format("{}: the identity reference is no baseline; no speedups are reported", folder.name));
      return Ok{};
    }
    out = Baseline{plan.reference.target(), plan.reference.name, plan.reference.info, "", plan.reference.has_backward};
  } else {
    std::string stem = b.rfind(folder.name + "__", 0) == 0 ? b.substr(folder.name.size() + 2) : b;
    auto it = std::find_if(folder.libraries.begin(), folder.libraries.end(), [&](const auto& p) { return library_stem(p) == stem; });
    if (it == folder.libraries.end() && !want_device.empty()) {  // that device's libraries may not be built here
      plan.warnings.push_back(fmt::format("{}: baseline '{}' for {} is no library of {}; no speedups on {}",
                                          plan.manifest.where(plan.manifest.baseline_line), b, want_device, folder.dir.string(), want_device));
      return Ok{};
    }
    if (it == folder.libraries.end())
      return make_error(fmt::format("{}: baseline '{}' is no library of {}; expected 'reference' or an implementation's name",
                                    plan.manifest.where(plan.manifest.baseline_line), b, folder.dir.string()));
    const auto info = infos.find(stem);
    out = Baseline{Target{Target::Kind::kernel_impl, it->string()}, folder.name + "__" + stem, info == infos.end() ? PluginInfo{} : info->second, "",
                   found.backward_impls.count(stem) > 0};
  }
  out.device = device_for(out.info, plan.manifest);
  if (!want_device.empty()) {
    const auto& devs = out.info.devices;
    if (!devs.empty() && std::find(devs.begin(), devs.end(), want_device) == devs.end())
      return make_error(fmt::format("{}: baseline '{}' for {} runs on {}, not {}", plan.manifest.where(plan.manifest.baseline_line), b,
                                    want_device, fmt::join(devs, ", "), want_device));
    out.device = want_device;
  }
  if (!out.device.empty()) plan.baselines.push_back(std::move(out));
  return Ok{};
}

// The manifest's `backward:`, case by case (backward_case.hpp): a wrong declaration is the op's
// error now, not a test's later, whatever the modes of this run.
Expected<std::vector<ConcreteCase>> backward_cases(const OpPlan& plan) {
  std::vector<ConcreteCase> out;
  if (!plan.manifest.backward) return out;
  const bool loss_sum = plan.manifest.backward->loss_sum;
  for (const auto& c : plan.cases) {
    if (loss_sum && c.kind != CaseKind::correctness) continue;  // --check-backwards times no backward
    auto b = backward_case(c, plan.manifest);
    if (!b) return b.error();
    if (loss_sum && b->outputs.empty()) continue;  // no floating input: nothing to differentiate
    out.push_back(std::move(*b));
  }
  return out;
}

// The passes this run checks and times of the op (--mode, else its backward's `modes:`, else
// fwd): its forward cases, then their backward cases. A backward is judged against the
// reference's backward; with none, by finite differences of the reference's forward on the small
// cases alone, and the plan says so.
constexpr int64_t kDifferencesLimit = 4096;
constexpr int64_t kDifferencesWork = int64_t{1} << 26;  // gradient elements x the case's elements: about 2^27 element-steps of forward calls
void choose_modes(OpPlan& plan, const PlanOptions& options, std::vector<ConcreteCase> backward) {
  const Manifest& m = plan.manifest;
  const std::vector<Mode> modes = options.modes ? *options.modes : m.backward ? m.backward->modes : std::vector<Mode>{Mode::fwd};
  auto wants = [&](Mode x) { return std::find(modes.begin(), modes.end(), x) != modes.end(); };
  std::map<std::string, ConcreteCase> forward;  // by id: a fwd_bwd case pairs each backward with its forward
  for (const auto& c : plan.cases) forward.emplace(c.id, c);
  if (!wants(Mode::fwd)) plan.cases.clear();
  if (!wants(Mode::bwd) && !wants(Mode::fwd_bwd)) return;
  if (!m.backward) {
    if (options.modes)
      plan.warnings.push_back(fmt::format("{}: declares no backward (docs/MANIFEST.md, Backward): --mode bwd and fwd_bwd run none of its tests", m.path.string()));
    return;
  }
  if (!plan.reference.has_backward) {
    // Judged by finite differences of the reference's forward: the manifest's own cases whose
    // differentiable inputs are small (2 forward calls an element); the others are not run.
    const std::size_t all = backward.size();
    std::erase_if(backward, [&](const ConcreteCase& b) {
      int64_t elements = 0, work = 0;  // the gradients' elements; each is two forward calls over the case's tensors
      for (const auto& o : b.outputs) elements += o.numel();
      for (const auto& t : b.inputs) work += t.numel();
      const bool own = b.name.find('~') == std::string::npos;  // no value variant, no random case
      return !own || elements > kDifferencesLimit || elements * work > kDifferencesWork || plan.reference.kind == ReferenceChoice::Kind::identity;
    });
    plan.warnings.push_back(fmt::format("{}: backward: the reference {} has no backward ({}_backward_reference): {} of {} bwd cases are checked "
                                        "against central finite differences of its forward in float64 (those of the manifest's own cases "
                                        "with at most {} differentiable elements), the others not run",
                                        m.where(m.backward->line), plan.reference.name, plan.folder.name, backward.size(), all, kDifferencesLimit));
  }
  std::vector<ConcreteCase> pairs;
  if (wants(Mode::fwd_bwd) && is_python_implementation(plan.reference.library))
    plan.warnings.push_back(fmt::format("{}: --mode fwd_bwd: the reference {} is a Python file, whose fwd_bwd is not supported yet: no fwd_bwd "
                                        "tests (its fwd and bwd tests judge each pass)",
                                        m.path.string(), plan.reference.name));
  else if (wants(Mode::fwd_bwd))
    for (const auto& b : backward)
      if (const auto f = forward.find(forward_case_id(b.id)); f != forward.end()) pairs.push_back(pair_case(f->second, b));
  if (!wants(Mode::bwd)) backward.clear();
  backward.insert(backward.end(), std::make_move_iterator(pairs.begin()), std::make_move_iterator(pairs.end()));
  for (auto& b : backward) {
    b.index = static_cast<int>(plan.cases.size());
    plan.cases.push_back(std::move(b));
  }
}

}  // namespace

Expected<OpPlan> plan_op(const OpFolder& folder, Executor& executor, const PlanOptions& options) {
  if (!folder.error.empty()) return make_error(folder.error);  // a folder that could not be read
  OpPlan plan;
  plan.folder = folder;
  for (const auto& [file, why] : folder.near_misses) plan.failures.push_back({file, why});
  std::map<std::string, nlohmann::json> surveyed;  // Python files already surveyed, by path
  if (is_generator(folder.manifest))
    if (auto s = generate_manifest(folder, executor, options, plan, surveyed); !s) return s.error();
  // The sweep's survey (under way beside this, if any): waited for once this folder needs it.
  if (options.surveyed) {
    const auto& all = options.surveyed();
    for (const auto& l : folder.libraries)
      if (auto it = all.find(l.string()); it != all.end()) surveyed.insert(*it);
  }
  auto m = load_manifest(plan.folder.manifest, folder.name);
  if (!m) return m.error();
  if (options.seed) m->seed = *options.seed;
  if (options.check_backwards && is_generator(folder.manifest) && !m->backward) m->backward = check_backwards_spec(*m);
  auto cases = expand_cases(*m, options.expansion);
  if (!cases) return cases.error();
  plan.manifest = std::move(*m);
  plan.cases = std::move(*cases);
  auto backward = backward_cases(plan);
  if (!backward) return backward.error();

  const OpFolder f = chosen_libraries(folder, plan, options);
  const std::vector<ExecOutcome> outcomes = probe_libraries(f, folder, executor, options, surveyed);
  Probed found;
  for (std::size_t k = 0; k < f.libraries.size(); ++k) read_probe(folder, f.libraries[k], outcomes[k], options, plan, found);
  executor.recycle();
  if (auto s = pick_reference(folder, found, plan); !s) return s.error();
  auto& impls = found.impls;
  declare_from_manifest(plan, impls);
  impls.insert(impls.end(), found.unavailable.begin(), found.unavailable.end());
  plan.impls = std::move(impls);
  for (auto& i : plan.impls) i.device = device_for(i.info, plan.manifest);
  // One that runs on none of the op's devices would be skipped on every case: unusable, in
  // `check` and in a run alike.
  std::erase_if(plan.impls, [&](const Implementation& i) {
    if (!i.device.empty() || !i.unavailable.empty()) return false;
    plan.failures.push_back({i.library, fmt::format("{}: declares devices {}; the manifest {} lists {}: it would never run", i.library.string(),
                                                    fmt::join(i.info.devices, ", "), plan.manifest.path.string(),
                                                    fmt::join(plan.manifest.devices, ", "))});
    return true;
  });
  // Baselines: per device when the manifest gives a map.
  if (plan.manifest.baselines.empty()) {
    if (auto s = resolve_baseline(folder, found, plan.manifest.baseline, "", plan); !s) return s.error();
  } else {
    for (const auto& [dev, name] : plan.manifest.baselines)
      if (auto s = resolve_baseline(folder, found, name, dev, plan); !s) return s.error();
  }
  choose_modes(plan, options, std::move(*backward));
  return plan;
}

std::string OpPlan::baseline_names() const {
  std::string s;
  for (const auto& b : baselines) s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", b.name, b.device);
  return s;
}

std::string device_for(const PluginInfo& info, const Manifest& m) {
  if (info.devices.empty()) return m.devices.front();
  for (const auto& d : info.devices)
    if (std::find(m.devices.begin(), m.devices.end(), d) != m.devices.end()) return d;
  return "";
}

Status filter_cases(std::vector<OpPlan>& plans, const std::vector<std::string>& patterns, const std::vector<int>& indices) {
  if (patterns.empty() && indices.empty()) return Ok{};
  std::set<std::string> unmatched(patterns.begin(), patterns.end());
  std::set<int> unused(indices.begin(), indices.end());
  std::vector<std::string> some;
  for (auto& p : plans) {
    std::vector<ConcreteCase> kept;
    for (std::size_t k = 0; k < p.cases.size(); ++k) {
      auto& c = p.cases[k];
      if (some.size() < 6) some.push_back(c.id);
      bool hit = false;
      // A pattern matches a case in every mode (--mode picks those): by its forward's id too.
      const std::string forward = forward_case_id(c.id);
      for (const auto& pat : patterns)
        for (const std::string* id : {static_cast<const std::string*>(&c.id), &forward})
          if (pat == *id || fnmatch(pat.c_str(), id->c_str(), 0) == 0) hit = true, unmatched.erase(pat);
      for (int i : indices)
        if (i == static_cast<int>(k)) hit = true, unused.erase(i);
      if (hit) kept.push_back(std::move(c));
    }
    p.cases = std::move(kept);
  }
  if (!unmatched.empty())
    return make_error(fmt::format("--cases: {} matches no case; case ids look like {} (a glob: correctness/*, performance/large*)",
                                  fmt::join(unmatched, ", "), some.empty() ? "none here" : fmt::format("{}", fmt::join(some, ", "))));
  if (!unused.empty())
    return make_error(fmt::format("--input-id: no op has a case {} (indices count from 0 in each op's order: --list shows it)",
                                  fmt::join(unused, ", ")));
  return Ok{};
}

Status filter_impls(std::vector<OpPlan>& plans, const std::vector<std::string>& names) {
  if (names.empty()) return Ok{};
  std::set<std::string> unknown(names.begin(), names.end());
  std::vector<std::string> all;
  for (auto& p : plans) {
    std::vector<Implementation> kept;
    for (auto& impl : p.impls) {
      all.push_back(impl.name);
      bool hit = false;
      for (const auto& n : names)
        if (n == impl.name || n == impl.stem) hit = true, unknown.erase(n);
      if (hit) kept.push_back(impl);
    }
    p.impls = std::move(kept);
  }
  if (!unknown.empty())
    return make_error(fmt::format("--impls: unknown implementation(s) {}; the selected ops have: {}",
                                  fmt::join(unknown, ", "), all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
  return Ok{};
}

Expected<std::vector<OpFolder>> filter_ops(std::vector<OpFolder> ops, const std::vector<std::string>& names) {
  if (names.empty()) return ops;
  std::vector<std::string> unknown;
  std::vector<OpFolder> kept;
  for (const auto& n : names) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const OpFolder& o) { return o.name == n; });
    if (it == ops.end()) unknown.push_back(n);
    else if (std::none_of(kept.begin(), kept.end(), [&](const OpFolder& o) { return o.name == n; })) kept.push_back(*it);
  }
  if (!unknown.empty()) {
    std::vector<std::string> all;
    for (const auto& o : ops) all.push_back(o.name);
    return make_error(fmt::format("--ops: unknown op(s) {}; the root has: {}", fmt::join(unknown, ", "),
                                  all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
  }
  std::sort(kept.begin(), kept.end(), [](const OpFolder& a, const OpFolder& b) { return a.name < b.name; });
  return kept;
}

bool SweepPlan::any_unusable() const {
  return !unusable.empty() || std::any_of(ops.begin(), ops.end(), [](const OpPlan& p) { return !p.failures.empty(); });
}

Expected<SweepPlan> plan_sweep(const SweepSelection& selection, const std::function<std::unique_ptr<Executor>()>& make_executor,
                               PlanOptions options) {
  auto discovered = discover_ops(selection.root);
  if (!discovered) return discovered.error();
  auto folders = filter_ops(std::move(*discovered), selection.ops);
  if (!folders) return folders.error();
  if (folders->empty()) return make_error(fmt::format("{}: no ops (folders holding gen_input.yaml)", selection.root.string()));
  // Python implementations: their interpreter's packages, asked once, before any worker starts;
  // their warm interpreter (python_found) where the plan imports any (a file --impls leaves out
  // is not imported where the folder has its reference: a run of C++ and CUDA implementations
  // beside a folder's Python files starts none).
  const bool generated = std::any_of(folders->begin(), folders->end(), [](const OpFolder& f) { return is_generator(f.manifest); });
  const bool any_python = std::any_of(folders->begin(), folders->end(), [&](const OpFolder& f) {
    return f.error.empty() && std::any_of(f.libraries.begin(), f.libraries.end(), [&](const auto& l) { return surveyed_up_front(f, l, options.selected); });
  });
  if (generated || std::any_of(folders->begin(), folders->end(), [](const OpFolder& f) {
        return std::any_of(f.libraries.begin(), f.libraries.end(), [](const auto& l) { return is_python_implementation(l); });
      })) {
    if (const PythonSite& site = resolve_python_site(selection.python); !site.error.empty() && site.named) return make_error(site.error);
    if (generated) note_python_dir(generated_root().string());  // written by the worker that makes the tests, read by every worker
    if (options.python_found && (generated || any_python)) options.python_found();
  }
  auto executor = make_executor();
  if (!options.make_executor) options.make_executor = make_executor;
  // Every Python file of the sweep imported at once, side by side, beside the ops' planning (a
  // generated manifest's gen_input.py): op after op, each folder's imports (a kernel library's
  // can take seconds) waited for the last one's.
  std::shared_future<std::map<std::string, nlohmann::json>> survey;
  std::shared_future<void> python_implementations;
  if (any_python && options.python_implementations) {
    std::vector<std::string> implementations;
    for (const auto& f : *folders)
      if (f.error.empty())
        for (const auto& l : f.libraries)
          if (surveyed_up_front(f, l, options.selected) && library_stem(l) != f.name + "_reference") implementations.push_back(l.string());
    try {
      python_implementations = std::async(std::launch::async, [called = options.python_implementations, implementations] {
                                 called(implementations);
                               }).share();
    } catch (const std::system_error&) {  // no thread: called now
      options.python_implementations(implementations);
    }
  }
  if (any_python) {
    const PlanOptions survey_options = options;
    // The folders by value: the last reference to this task (in `options`, a parameter) waits for
    // it after this function's locals are gone.
    auto run_survey = [folders = *folders, survey_options] {
      auto ex = survey_options.make_executor();  // made, used and ended on this thread (executor.hpp)
      return survey_sweep(folders, *ex, survey_options);
    };
    try {
      survey = std::async(std::launch::async, run_survey).share();
    } catch (const std::system_error&) {  // no thread: surveyed now
      survey = std::async(std::launch::deferred, run_survey).share();
    }
    options.surveyed = [survey]() -> const std::map<std::string, nlohmann::json>& { return survey.get(); };
  }
  SweepPlan out;
  out.python_implementations = python_implementations;
  for (const auto& f : *folders) {
    auto plan = plan_op(f, *executor, options);
    if (!plan) {
      out.unusable.push_back({f, plan.error().message});
      continue;
    }
    out.ops.push_back(std::move(*plan));
  }
  // Implementation names are unique across the sweep (results, baselines and --impls go by
  // them): a second library whose name is taken is reported, not run.
  std::map<std::string, std::filesystem::path> taken;
  for (auto& p : out.ops) {
    std::vector<Implementation> kept;
    for (auto& impl : p.impls) {
      if (auto [it, fresh] = taken.emplace(impl.name, impl.library); !fresh) {
        p.failures.push_back({impl.library, fmt::format("{}: the implementation name '{}' is already taken by {}; rename the library",
                                                        impl.library.string(), impl.name, it->second.string())});
        continue;
      }
      kept.push_back(std::move(impl));
    }
    p.impls = std::move(kept);
  }
  if (auto s = filter_impls(out.ops, selection.impls); !s) return s.error();
  if (auto s = filter_cases(out.ops, selection.cases, selection.input_ids); !s) {
    // An op whose manifest could not be used has no case to match: its error is the news.
    std::string message = s.error().message;
    for (const auto& u : out.unusable) message += fmt::format("\n{}'s cases could not be matched: its manifest could not be used: {}", u.folder.name, u.error);
    return make_error(message);
  }
  return out;
}

}  // namespace bb
