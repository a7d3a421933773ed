// What a plugin call may not leave behind in its worker process: a changed working directory
// or environment (restored, and reported), child processes still running (killed, and
// reported), threads still running that it started (their outputs are watched: request_server).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace bb {

// The process's state before a call.
struct ProcessState {
  std::string cwd;
  std::vector<std::string> environment;  // "NAME=value", sorted
  std::set<long> threads;                // ids of the process's threads
};

ProcessState capture_process_state();

// What changed since `before`: "" when nothing did. The working directory and the environment
// are put back as they were; child processes of this process are killed and reaped.
struct LeftBehind {
  std::string changes;     // "changed the working directory from A to B; set X=1"
  std::string children;    // "left 1 child process running (pid 12: sleep); killed"
  bool new_threads = false;  // threads started during the call are still alive
  bool any() const { return !changes.empty() || !children.empty(); }
  std::string describe() const;  // changes and children, joined
};

LeftBehind restore_process_state(const ProcessState& before);

}  // namespace bb
