// backendbench: a command of the table (commands.hpp) when the first argument names one, else a
// run (run_main.cpp).
#include "commands/cli.hpp"
#include "commands/commands.hpp"

int main(int argc, char** argv) {
  if (argc >= 2)
    if (const bb::Command* command = bb::find_command(argv[1]))
      return bb::run_subcommand(*command, bb::CommandContext{argc - 1, argv + 1, bb::self_executable(argv[0])});
  return bb::run_main(argc, argv);
}
