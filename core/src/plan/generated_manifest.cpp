#include "plan/generated_manifest.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "measure/device_peak.hpp"
#include "plan/file_digest.hpp"
#include "plugin_library.hpp"
#include "protocol/worker_protocol.hpp"

namespace bb {

namespace {

constexpr const char* kGeneratorVersion = "1";  // bump when what generate() writes changes

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

bool is_generator(const std::filesystem::path& manifest) { return manifest.filename() == "gen_input.py"; }

std::filesystem::path generated_root() { return device_cache_dir() / "generated"; }

Expected<std::filesystem::path> generated_manifest(const OpFolder& folder, Executor& executor, std::optional<uint64_t> seed, double timeout) {
  // The reference first, then the other Python files: the first that defines a function gives
  // the outputs' shapes.
  std::vector<std::filesystem::path> candidates;
  for (const auto& lib : folder.libraries)
    if (is_python_implementation(lib)) candidates.push_back(lib);
  std::stable_partition(candidates.begin(), candidates.end(), [&](const auto& p) { return p.stem() == folder.name + "_reference"; });
  const uint64_t drawn_with = seed.value_or(0);
  std::string key = fmt::format("{}|{}|{}", kGeneratorVersion, folder.name, drawn_with);
  for (const auto& f : std::vector<std::filesystem::path>{folder.manifest}) {
    auto h = sha256_file(f);
    if (!h) return make_error(fmt::format("{}: cannot be read: {}", f.string(), h.error().message));
    key += "|" + *h;
  }
  for (const auto& f : candidates)
    if (auto h = sha256_file(f)) key += "|" + f.filename().string() + ":" + *h;
  const auto dir = generated_root() / fmt::format("{}-{:016x}", folder.name, fnv1a(key));
  const auto manifest = dir / "gen_input.yaml";
  std::error_code ec;
  if (std::filesystem::is_regular_file(manifest, ec)) return manifest;

  // Made by a worker (its own user, perhaps) in a folder of its own, then moved into place.
  const auto tmp = generated_root() / fmt::format("tmp-{}-{}", dir.filename().string(), getpid());
  std::filesystem::remove_all(tmp, ec);
  std::filesystem::create_directories(tmp, ec);
  if (ec) return make_error(fmt::format("{}: cannot be made (for {}'s tests): {}", tmp.string(), folder.manifest.string(), ec.message()));
  std::filesystem::permissions(tmp, std::filesystem::perms::all, ec);
  std::vector<std::string> files;
  for (const auto& c : candidates) files.push_back(c.string());
  executor.recycle();
  executor.allow_writing_next(tmp.string());
  ExecOutcome out = executor.execute(request_json(GenerateRequest{folder.manifest.string(), files, folder.name, drawn_with, tmp.string()}), timeout);
  executor.recycle();
  auto fail = [&](std::string why) {
    std::filesystem::remove_all(tmp, ec);
    return make_error(std::move(why));
  };
  if (out.status == ExecOutcome::Status::timed_out)
    return fail(fmt::format("{}: making its tests took more than {:.0f} s; the worker was killed", folder.manifest.string(), timeout));
  if (out.status != ExecOutcome::Status::ok)
    return fail(fmt::format("{}: the worker making its tests crashed: {}{}", folder.manifest.string(), out.detail,
                            out.output.empty() ? "" : "\n" + out.output));
  if (!out.reply.is_object()) return fail(fmt::format("{}: the worker making its tests answered no object", folder.manifest.string()));
  if (const auto why = out.reply.find("error"); why != out.reply.end() && !(why->is_string() && why->get<std::string>().empty()))
    return fail(why->is_string() ? why->get<std::string>() : fmt::format("{}: the worker making its tests answered an error of another type", folder.manifest.string()));
  if (!std::filesystem::is_regular_file(tmp / "gen_input.yaml", ec)) return fail(fmt::format("{}: no manifest was made", folder.manifest.string()));
  std::filesystem::rename(tmp, dir, ec);
  if (ec) {  // another run made it meanwhile
    std::filesystem::remove_all(tmp, ec);
    if (!std::filesystem::is_regular_file(manifest, ec)) return make_error(fmt::format("{}: cannot be kept: {}", dir.string(), ec.message()));
  }
  return manifest;
}

}  // namespace bb
