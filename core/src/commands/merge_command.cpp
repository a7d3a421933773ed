// backendbench merge --log-dir OUT SHARD...: the shards of one sweep joined into one run, with
// every report regenerated in OUT (merge.hpp decides; this reads and writes).
//
// Nothing is written until every shard is read and checked, so a refused merge leaves OUT as it
// was; each report is written through a temp file and a rename. Exit status as a run: 0 every
// test passed (or was SKIPPED), 1 some test did not pass, 2 unusable input.
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands/commands.hpp"
#include "compare/merge.hpp"
#include "report/report_files.hpp"
#include "run_files.hpp"
#include "run_record.hpp"

namespace bb {

namespace {

namespace fs = std::filesystem;

// The folder a shard argument writes to: itself when a folder, else the file's folder.
fs::path folder_of(const fs::path& p) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(p, ec) ? p : p.parent_path();
  const fs::path canon = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
  return ec ? dir : canon;
}

}  // namespace

int merge_command(CLI::App& app, const CommandContext& ctx) {
  app.description("Joins the shards of one sweep (--shard i/n) into one run and writes every report of it to --log-dir");
  std::string out_dir;
  std::vector<std::string> inputs;
  MergeOptions options;
  bool quiet = false;
  app.add_option("--log-dir", out_dir, "folder for the merged run's reports (results.json, junit.xml, ...)")->required();
  app.add_option("SHARD", inputs, "each shard's results.json, results.jsonl, or log dir")->required()->expected(1, -1);
  app.add_flag("--allow-partial", options.allow_partial, "merge even with a shard missing or one that did not finish (a warning each)");
  app.add_flag("-q,--quiet", quiet, "print nothing but warnings and errors");
  if (auto status = parse_command(app, ctx)) return *status;
  options.command = "backendbench";
  for (int i = 0; i < ctx.argc; ++i) options.command += std::string(" ") + ctx.argv[i];

  // Every shard is read and its folder checked before anything is said or written.
  const fs::path out_canon = folder_of(fs::path(out_dir) / "results.json");
  std::vector<ShardRun> shards;
  bool unusable = false;
  for (const auto& in : inputs) {
    if (folder_of(in) == out_canon) {
      fmt::print(stderr, "error: merge: {} is in --log-dir {}: the merge would overwrite it; write the merge elsewhere\n", in, out_dir);
      unusable = true;
      continue;
    }
    auto run = load_run(in);
    if (!run) {
      fmt::print(stderr, "error: merge: {}\n", run.error().message);
      unusable = true;
      continue;
    }
    shards.push_back({run_file(in).string(), std::move(*run)});
  }
  if (unusable) return 2;

  auto merged = merge_shards(shards, options);
  if (!merged) {
    fmt::print(stderr, "error: merge: {}\n", merged.error().message);
    return 2;
  }
  for (const auto& w : merged->warnings) fmt::print(stderr, "warning: merge: {}\n", w);
  const RunRecord& run = merged->run;

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    fmt::print(stderr, "error: merge: --log-dir {}: {}\n", out_dir, ec.message());
    return 2;
  }
  if (auto st = write_reports(run, log_dir_reports(out_dir)); !st) {
    fmt::print(stderr, "error: merge: {}\n", st.error().message);
    return 2;
  }
  if (!quiet) {
    const auto& s = run.scores;
    fmt::print("merged {} of {} shard(s) of sweep {}: {} tests, {} passed, {} failed, {} skipped{} -> {}\n", run.merged_shards.size(),
               run.merged_shards.empty() ? 1 : run.merged_shards.front().count, run.sweep_id.empty() ? "(no id)" : run.sweep_id, s.tests,
               s.passed, s.failed, s.skipped, run.complete ? "" : " (PARTIAL)", out_dir);
  }
  return run.exit_code;
}

}  // namespace bb
