// backendbench resource-spec: the CTest resource spec of this machine's GPUs.
//
// `ctest -j N --resource-spec-file FILE` hands each test that declared RESOURCE_GROUPS
// "gpus:1" one of the spec's gpus (CTEST_RESOURCE_GROUP_0_GPUS=id:<id>,slots:1), and
// backendbench, run by that test, takes the id as its --devices ordinal. The devices are asked
// of a worker process, as a run asks: the host links no GPU runtime and a runtime that crashes
// while loading cannot take this command down.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "devices/device_runtimes.hpp"
#include "protocol/worker_protocol.hpp"
#include "report/report_files.hpp"
#include "run/workers/executor.hpp"

namespace bb {
namespace {

// The ordinals of every device of `kind` ("cuda", "hip") a worker sees; none when the runtime
// is not there. `why` gets the runtime's reason when it is unavailable.
std::vector<int> device_ordinals(Executor& executor, const std::string& kind, std::string& why) {
  const ExecOutcome out = executor.execute(request_json(DevicesRequest{.kind = kind}), 120.0);
  if (out.status != ExecOutcome::Status::ok) {
    why = fmt::format("the worker asking for {} devices {}: {}", kind,
                      out.status == ExecOutcome::Status::timed_out ? "timed out" : "crashed", out.detail);
    executor.recycle();
    return {};
  }
  if (out.reply.contains("error")) {
    why = fmt::format("{}: {}", kind, out.reply["error"].get<std::string>());
    return {};
  }
  if (!out.reply.value("available", false)) {
    why = fmt::format("{}: {}", kind, out.reply.value("reason", "not available"));
    return {};
  }
  std::vector<int> ordinals;
  for (const auto& d : out.reply.value("devices", nlohmann::json::array())) ordinals.push_back(d.value("ordinal", 0));
  return ordinals;
}

}  // namespace

int resource_spec_command(CLI::App& app, const CommandContext& ctx) {
  app.description("Writes a CTest resource spec (JSON) with one `gpus` resource per GPU of this machine, for "
               "`ctest -j N --resource-spec-file FILE`");
  std::string output;
  std::string kind = "all";
  int slots = 1;
  app.add_option("--output,-o", output, "file to write (default: standard output)");
  std::vector<std::string> kinds;
  std::string kinds_text;
  for (const auto& rt : runtime_rows()) kinds.emplace_back(rt.name), kinds_text += (kinds_text.empty() ? "" : ", ") + kinds.back();
  kinds.emplace_back("all");
  app.add_option("--kind", kind, "device kinds to ask for: " + kinds_text + " or all")->check(CLI::IsMember(kinds));
  app.add_option("--slots", slots, "tests that may share one GPU at a time")->check(CLI::Range(1, 1024));
  if (auto status = parse_command(app, ctx)) return *status;

  // One id per ordinal: a machine has CUDA or HIP GPUs, and a test's id is its --devices
  // ordinal whichever kind its implementation runs on.
  auto executor = make_isolated_executor(ctx.self.string());
  std::set<int> ordinals;
  std::vector<std::string> absent;
  for (const auto& rt : runtime_rows()) {
    const std::string k = rt.name;
    if (kind != "all" && kind != k) continue;
    std::string why;
    for (int o : device_ordinals(*executor, k, why)) ordinals.insert(o);
    if (!why.empty()) absent.push_back(why);
  }
  if (ordinals.empty())
    for (const auto& why : absent) fmt::print(stderr, "resource-spec: no GPU: {}\n", why);

  nlohmann::json gpus = nlohmann::json::array();
  for (int o : ordinals) gpus.push_back({{"id", std::to_string(o)}, {"slots", slots}});
  const nlohmann::json spec = {{"version", {{"major", 1}, {"minor", 0}}}, {"local", nlohmann::json::array({{{"gpus", gpus}}})}};
  const std::string text = spec.dump(2) + "\n";

  if (output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  if (auto st = write_file_atomically(output, text); !st) {
    fmt::print(stderr, "error: resource-spec: {}\n", st.error().message);
    return 2;
  }
  fmt::print(stderr, "resource-spec: {} GPU(s) written to {}\n", ordinals.size(), output);
  return 0;
}

}  // namespace bb
