#include "commands/commands.hpp"

#include <cstdlib>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "run/workers/executor.hpp"
#include "run/workers/python_zygote.hpp"

namespace bb {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"check", "[ROOT] [--ops a,b] [--list]", "a root validated without running a kernel (exit 2: unusable); --list: what a run would test", check_command},
      {"new-op", "NAME [--lang cpp|python] [--devices ...]", "a new op's folder: manifest, reference, implementations", new_op_command},
      {"compare", "BASE NEW [--threshold PCT] [--md FILE]", "a run against an earlier one (exit 3: regression)", compare_command},
      {"merge", "--log-dir OUT SHARD...", "the shards of one sweep joined into one run", merge_command},
      {"resource-spec", "[-o FILE]", "a CTest resource spec of this host's GPUs", resource_spec_command},
      {"__worker", nullptr, "the worker process", worker_command},
      {"__zygote", nullptr, "the warm interpreter Python workers are forked from", zygote_command},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

std::string commands_help() {
  std::string text = "Commands:\n";
  for (const auto& c : commands())
    if (c.usage) text += fmt::format("  {:<60} {}\n", fmt::format("backendbench {} {}", c.name, c.usage), c.summary);
  return text + "Each takes --help. docs/RUNNING.md, docs/NIGHTLY.md and docs/COMPARE.md say more.";
}

int run_subcommand(const Command& command, const CommandContext& ctx) {
  CLI::App app;
  app.name(fmt::format("backendbench {}", command.name));
  return command.run(app, ctx);
}

std::optional<int> parse_command(CLI::App& app, const CommandContext& ctx) {
  try {
    app.parse(ctx.argc, ctx.argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

int worker_command(CLI::App&, const CommandContext& ctx) { return worker_main(ctx.argc >= 2 ? std::atol(ctx.argv[1]) : 0); }

int zygote_command(CLI::App&, const CommandContext& ctx) {
  if (ctx.argc >= 4 && std::string_view(ctx.argv[1]) == "keep") return python_kept_main(ctx.argv[2], std::atof(ctx.argv[3]), ctx.argv[0]);
  return python_zygote_main(ctx.argc >= 2 ? std::atol(ctx.argv[1]) : 0, ctx.argc >= 1 ? ctx.argv[0] : nullptr);
}

}  // namespace bb
