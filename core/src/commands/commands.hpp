// The commands of `backendbench`, in one table (ninja's Tool table): the run is the command
// without a name (run_main.cpp); the others are looked up by their first argument. Each
// reads its own arguments with CLI11 through parse_command, and returns the process's exit
// status.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace bb {

// What a command is given: its arguments (argv[0] is its name) and the host binary, which
// workers run.
struct CommandContext {
  int argc = 0;
  char** argv = nullptr;
  std::filesystem::path self;
};

struct Command {
  const char* name;     // "compare"
  const char* usage;    // "BASE NEW [--threshold PCT] [--md FILE]"; nullptr: not listed in --help
  const char* summary;  // one line of --help
  // Declares its options on `app` (named "backendbench <name>"), parses them (parse_command),
  // then runs.
  int (*run)(CLI::App& app, const CommandContext& ctx);
};

const std::vector<Command>& commands();
const Command* find_command(std::string_view name);
// The run's --help footer: each listed command, its usage and summary.
std::string commands_help();

// Runs `command` with its arguments (ctx.argv[0] is its name).
int run_subcommand(const Command& command, const CommandContext& ctx);

// The parse-and-catch every command shares: nullopt once the arguments are read (the command
// goes on); else the status to exit with: 0 after --help, 2 for arguments it cannot use (CLI11
// says why on stderr).
std::optional<int> parse_command(CLI::App& app, const CommandContext& ctx);

// backendbench check [ROOT] [--ops a,b] [--list]: validates manifests and libraries without running a
// kernel; 0 usable, 2 not.
int check_command(CLI::App& app, const CommandContext& ctx);
// backendbench new-op NAME [--root DIR] [--devices cpu,cuda,hip]: writes NAME/ (manifest,
// reference, an implementation per device, CMakeLists.txt); 0 written, 2 refused.
int new_op_command(CLI::App& app, const CommandContext& ctx);
// backendbench compare BASE NEW [--threshold PCT] [--md FILE]: 0 no regression, 3 a
// regression, 2 unusable input.
int compare_command(CLI::App& app, const CommandContext& ctx);
// backendbench merge --log-dir OUT SHARD...: joins the shards of one sweep (result files or
// log dirs) into one run and writes every report; 0/1 as a run, 2 unusable input.
int merge_command(CLI::App& app, const CommandContext& ctx);
// backendbench resource-spec [--output FILE]: a CTest resource spec (JSON) with one `gpus`
// resource per device found, for `ctest --resource-spec-file`.
int resource_spec_command(CLI::App& app, const CommandContext& ctx);
// backendbench [OPTIONS]: a run (cli.hpp): 0 every test passed, 1 some did not, 2 unusable.
int run_main(int argc, char** argv);
// backendbench __worker HOST_PID: the worker process (executor.hpp, worker_main); not for people.
int worker_command(CLI::App& app, const CommandContext& ctx);
// backendbench __zygote HOST_PID: the warm interpreter Python workers are forked from
// (python_zygote.hpp); not for people.
int zygote_command(CLI::App& app, const CommandContext& ctx);

}  // namespace bb
