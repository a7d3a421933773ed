// The one line that runs a test again alone, in the foreground: in this process (--no-isolate),
// so that a debugger started as `gdb --args <the line>` stops where it crashed. Said with every
// CRASH (crash_report.hpp), on the console and in results.json.
#pragma once

#include <string>

#include "results.hpp"
#include "run/session_options.hpp"

namespace bb {

std::string rerun_command(const SessionOptions& o, const TestId& id);
// `text` quoted for a POSIX shell where it needs it.
std::string shell_quoted(const std::string& text);

}  // namespace bb
