// Where a worker crashed, from its last words (worker/crash_frames.hpp): the signal, the
// faulting address and its stack's frames, each turned into function, file and line where the
// module has debug information (binutils' addr2line, run behind walls of its own: the library
// it reads is the plugin's, as hostile as its code). The verdict stays the host's own (how the
// process ended); this only says where, so that a kernel engineer can go there.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bb {

struct CrashFrame {
  uint64_t pc = 0;
  uint64_t offset = 0;  // in its module (0 with no module)
  std::string module;   // the file, as the worker loaded it; "" where it was not known
  std::string function, file;
  int line = 0;
  std::string where() const;  // "run at scale_segfault.cpp:5 (libscale_segfault.so)"
};

struct CrashReport {
  std::string signal;  // "SIGSEGV"
  uint64_t address = 0;
  bool sent = false;  // raised or sent (raise, kill, abort): no faulting address
  std::vector<CrashFrame> frames;
  // The first frame in one of `modules` (the plugin's own code), else the first frame.
  const CrashFrame* first_in(const std::set<std::string>& modules) const;
  nlohmann::json to_json() const;
};

// The report a worker's output holds (its last one), with those lines taken out of `output`.
std::optional<CrashReport> take_crash_report(std::string& output);

// Function, file and line for the frames whose module is one of `modules` (paths as the worker
// named them: only files the run loaded itself are read). Each module is read by addr2line in a
// child behind walls (Landlock read-only, the system call filter, a user of its own where the
// host is root, limits on time and memory); a frame it cannot place keeps its module and offset.
void symbolise(CrashReport& report, const std::set<std::string>& modules, double timeout_s = 10);

}  // namespace bb
