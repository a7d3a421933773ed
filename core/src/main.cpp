// backendbench: a command of the table (commands.hpp) when the first argument names one, else a
// run (run_command.cpp).
#include "cli.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  if (argc >= 2)
    if (const bb::Command* command = bb::find_command(argv[1]))
      return bb::run_command(*command, bb::CommandContext{argc - 1, argv + 1, bb::self_executable(argv[0])});
  return bb::run_main(argc, argv);
}
