#include "run/workers/python_site.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <backendbench/detail/python_bridge.h>

extern char** environ;

namespace bb {

namespace {

constexpr const char* kAsk = "import json, sys; print(json.dumps({'version': list(sys.version_info[:2]), 'base_prefix': sys.base_prefix, 'path': sys.path}))";

std::optional<PythonSite> g_site;

// The workers' scratch space (each worker's private Triton cache), removed when the host ends.
struct Scratch {
  std::string dir;
  ~Scratch() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
} g_scratch;
std::vector<std::string> g_extra;
std::mutex g_mutex;

// `program -c kAsk`'s standard output, or an error.
std::string ask(const std::string& program, std::string& error) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    error = "cannot make a pipe";
    return "";
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string c = "-c", code = kAsk;
  char* argv[] = {const_cast<char*>(program.c_str()), c.data(), code.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  close(pipe_fds[0]);
  if (rc != 0) {
    error = fmt::format("cannot be run: {}", std::strerror(rc));
    return "";
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) error = "did not answer (it exited with an error)";
  return out;
}

}  // namespace

const PythonSite& resolve_python_site(const std::string& interpreter) {
  std::lock_guard lock(g_mutex);
  if (g_site) return *g_site;
  PythonSite site;
  site.named = !interpreter.empty();
  site.interpreter = site.named ? interpreter : "python3";
  std::string error;
  const std::string out = ask(site.interpreter, error);
  const auto j = error.empty() ? nlohmann::json::parse(out, nullptr, false) : nlohmann::json();
  if (error.empty() && (!j.is_object() || !j.contains("path"))) error = "gave no answer that could be read";
  if (!error.empty()) {
    site.error = fmt::format("the Python interpreter {}{} {}", site.interpreter, site.named ? " (--python)" : " (on the PATH)", error);
    if (!site.named) site.interpreter.clear();  // none: the embedded interpreter's own packages
  } else {
    std::error_code ec;
    for (const auto& p : j["path"])
      if (p.is_string() && !p.get<std::string>().empty() && std::filesystem::exists(p.get<std::string>(), ec)) site.path.push_back(p);
    nlohmann::json env = j;
    env["interpreter"] = site.interpreter;
    env["named"] = site.named;
    setenv(BB_PYTHON_SITE_ENV, env.dump().c_str(), 1);
  }
  if (site.named) setenv(BB_PYTHON_ENV, interpreter.c_str(), 1);
  std::string scratch = (std::filesystem::temp_directory_path() / "backendbench-python-XXXXXX").string();
  if (mkdtemp(scratch.data())) {
    std::error_code ec;
    std::filesystem::permissions(scratch, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
    g_scratch.dir = scratch;
    setenv("BACKENDBENCH_PYTHON_SCRATCH", scratch.c_str(), 1);
  }
  g_site = site;
  return *g_site;
}

std::vector<std::string> python_site_dirs() {
  std::lock_guard lock(g_mutex);
  auto dirs = g_site ? g_site->path : std::vector<std::string>{};
  dirs.insert(dirs.end(), g_extra.begin(), g_extra.end());
  return dirs;
}

std::vector<std::string> python_package_dirs() {
  std::lock_guard lock(g_mutex);
  std::vector<std::string> dirs;
  if (g_site)
    for (const auto& d : g_site->path)
      if (!d.empty() && d.front() == '/') dirs.push_back(d);
  return dirs;
}

void note_python_dir(const std::string& dir) {
  std::lock_guard lock(g_mutex);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  g_extra.push_back(dir);
}

}  // namespace bb
