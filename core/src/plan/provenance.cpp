#include "plan/provenance.hpp"

#include <fstream>

#include <fmt/format.h>

#include "build_info.hpp"
#include "plan/file_digest.hpp"
#include "version.hpp"

namespace bb {

namespace {

nlohmann::json file_entry(const std::filesystem::path& root, const std::filesystem::path& file) {
  std::error_code ec;
  auto rel = std::filesystem::relative(file, root, ec);
  nlohmann::json j = {{"path", ec || rel.empty() ? file.string() : rel.string()}};
  const auto size = std::filesystem::file_size(file, ec);
  j["size"] = ec ? nlohmann::json() : nlohmann::json(size);
  auto sha = sha256_file(file);
  j["sha256"] = sha ? nlohmann::json(*sha) : nlohmann::json();
  if (!sha) j["error"] = sha.error().message;
  return j;
}

// FNV-1a, 64 bits: an id, not a defence.
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator, so ("ab","c") differs from ("a","bc")
  }
};

}  // namespace

nlohmann::json describe_provenance(const std::filesystem::path& root, const std::vector<OpPlan>& plans,
                                   const std::vector<std::filesystem::path>& runtime_plugins) {
  nlohmann::json manifests = nlohmann::json::array(), plugins = nlohmann::json::array(), runtimes = nlohmann::json::array();
  for (const auto& p : plans) {
    auto m = file_entry(root, p.folder.manifest);
    m["op"] = p.folder.name;
    manifests.push_back(m);
    for (const auto& lib : p.folder.libraries) {
      auto e = file_entry(root, lib);
      e["op"] = p.folder.name;
      plugins.push_back(e);
    }
  }
  for (const auto& r : runtime_plugins) runtimes.push_back(file_entry(r.parent_path(), r));
  return {{"tool", {{"name", "backendbench"}, {"version", kVersion}, {"commit", kGitCommit}, {"dirty", kGitDirty}}},
          {"manifests", manifests},
          {"plugins", plugins},
          {"runtime_plugins", runtimes}};
}

std::string sweep_identity(const std::vector<OpPlan>& plans, const std::vector<TestSpec>& tests, const nlohmann::json& options,
                           const nlohmann::json& provenance, const std::string& run_id) {
  Fnv f;
  f.add(run_id);
  for (const auto& t : tests) f.add(fmt::format("{}/{}/{}#{}", plans[t.op].folder.name, plans[t.op].impls[t.impl].name, plans[t.op].cases[t.case_pos].id, t.repeat));
  for (const auto& m : provenance.value("manifests", nlohmann::json::array())) f.add(m.value("sha256", nlohmann::json()).dump());
  // Options that change what a test does; not where results go, nor how many workers.
  for (const char* key : {"performance", "check_determinism", "seed", "timing_mode", "min_samples", "max_samples", "min_time_s",
                          "max_noise", "timeout_s", "warmup_time_s", "repeats"})
    f.add(options.value(key, nlohmann::json()).dump());
  return fmt::format("{:016x}", f.h);
}

}  // namespace bb
