#include "worker/call_guard.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

extern char** environ;

namespace bb {

namespace {

std::set<long> thread_ids() {
  std::set<long> ids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ids.insert(std::strtol(e->d_name, nullptr, 10));
    closedir(d);
  }
  return ids;
}

// This process's children: /proc/self/task/<tid>/children of every thread.
std::vector<long> child_pids() {
  std::vector<long> pids;
  for (long tid : thread_ids()) {
    std::ifstream in(fmt::format("/proc/self/task/{}/children", tid));
    for (long pid; in >> pid;) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::string command_of(long pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string comm;
  std::getline(in, comm);
  return comm.empty() ? "?" : comm;
}

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& kv : env) {
    const auto eq = kv.find('=');
    m[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  return m;
}

std::string shorten(const std::string& s) { return s.size() > 80 ? s.substr(0, 77) + "..." : s; }

}  // namespace

ProcessState capture_process_state() {
  ProcessState s;
  std::error_code ec;
  s.cwd = std::filesystem::current_path(ec).string();
  for (char** e = environ; e && *e; ++e) s.environment.emplace_back(*e);
  std::sort(s.environment.begin(), s.environment.end());
  s.threads = thread_ids();
  return s;
}

LeftBehind restore_process_state(const ProcessState& before) {
  LeftBehind out;
  std::vector<std::string> changes;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (cwd != before.cwd) {
    changes.push_back(fmt::format("changed the working directory from {} to {}", before.cwd, ec ? "(unreadable)" : cwd));
    std::filesystem::current_path(before.cwd, ec);
  }
  std::vector<std::string> now;
  for (char** e = environ; e && *e; ++e) now.emplace_back(*e);
  std::sort(now.begin(), now.end());
  if (now != before.environment) {
    const auto was = as_map(before.environment), is = as_map(now);
    for (const auto& [k, v] : is) {
      auto it = was.find(k);
      if (it == was.end()) changes.push_back(fmt::format("set {}={}", k, shorten(v)));
      else if (it->second != v) changes.push_back(fmt::format("changed {} to {}", k, shorten(v)));
    }
    for (const auto& [k, v] : was)
      if (!is.count(k)) changes.push_back(fmt::format("unset {}", k));
    for (const auto& [k, v] : is)
      if (!was.count(k)) unsetenv(k.c_str());
    for (const auto& [k, v] : was) setenv(k.c_str(), v.c_str(), 1);
  }
  out.changes = fmt::format("{}", fmt::join(changes, "; "));

  const auto kids = child_pids();
  if (!kids.empty()) {
    std::vector<std::string> which;
    for (long pid : kids) {
      which.push_back(fmt::format("pid {}: {}", pid, command_of(pid)));
      kill(static_cast<pid_t>(pid), SIGKILL);
    }
    for (long pid : kids)
      while (waitpid(static_cast<pid_t>(pid), nullptr, 0) < 0 && errno == EINTR) {
      }
    out.children = fmt::format("left {} child process{} running ({}); killed", kids.size(), kids.size() == 1 ? "" : "es",
                               fmt::join(which, ", "));
  }
  for (long tid : thread_ids())
    if (!before.threads.count(tid)) out.new_threads = true;
  return out;
}

std::string LeftBehind::describe() const {
  if (changes.empty()) return children;
  if (children.empty()) return changes;
  return changes + "; " + children;
}

}  // namespace bb
