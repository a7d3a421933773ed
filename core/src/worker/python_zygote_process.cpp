// The warm interpreter's side (python_zygote.hpp): `backendbench __zygote HOST_PID`. It imports
// PyTorch and Triton once, says it is ready, then forks a worker per request: each child puts up
// its walls (cgroup, namespaces, HOME, its own user) and only then takes the worker's
// environment and becomes a worker (worker_main), whose first request imports the
// implementation. This process never runs an implementation's code, never makes a device
// context, and keeps one thread: a fork of it is a whole interpreter.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "executor.hpp"
#include "landlock.hpp"
#include "message_channel.hpp"
#include "syscall_filter.hpp"
#include "plugin_library.hpp"
#include "python_zygote.hpp"
#include "sandbox.hpp"
#include "worker/worker_integrity.hpp"

namespace bb {

namespace {

// The process's threads other than this one, by name (/proc/self/task/<tid>/comm).
std::vector<std::string> other_threads() {
  std::vector<std::string> names;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' || std::atol(e->d_name) == static_cast<long>(gettid())) continue;
      std::string name = "?";
      if (FILE* f = std::fopen(fmt::format("/proc/self/task/{}/comm", e->d_name).c_str(), "r")) {
        char text[64] = {};
        if (std::fgets(text, sizeof text, f)) name = std::string(text, strcspn(text, "\n"));
        std::fclose(f);
      }
      names.push_back(name);
    }
    closedir(d);
  }
  return names;
}

// Libraries that start threads at load register fork handlers that stop them (OpenBLAS, which
// numpy loads with PyTorch, starts one per core and stops them all before a fork, until its next
// call). A fork through the C library runs those handlers; the workers' own forks cannot (they
// are made with a system call of its own: fork_as_hosts_child), so one is made, and ended, now.
void run_fork_handlers() {
  python_before_fork();
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  python_after_fork(false);
  if (pid > 0) waitpid(pid, nullptr, 0);
}

void say(int sock, const nlohmann::json& j) { (void)send_packet(sock, j.dump()); }

[[noreturn]] void fail_in_child(const char* step, const std::string& why) {
  const std::string text = fmt::format("backendbench worker sandbox: {}: {}\n", step, why);
  (void)!write(STDERR_FILENO, text.data(), text.size());
  _exit(126);
}

// In the child: the same walls, in the same order, as a worker started cold puts up before its
// exec (isolated_executor_posix.cpp), then the worker itself.
[[noreturn]] void become_worker(const SpawnSpec& spec, int protocol_fd, int output_fd) {
  setpgid(0, 0);
  if (spec.memory_bytes > 0) {
    const rlimit lim{static_cast<rlim_t>(spec.memory_bytes), static_cast<rlim_t>(spec.memory_bytes)};
    setrlimit(RLIMIT_DATA, &lim);
  }
  dup2(protocol_fd, STDIN_FILENO);
  dup2(output_fd, STDOUT_FILENO);
  dup2(output_fd, STDERR_FILENO);
  close_range(3, ~0U, 0);  // nothing of the interpreter's: not its socket to the host
  const char* step = nullptr;
  int err = enter_sandbox_before_exec(spec.walls, &step);
  if (err == 0) err = enter_pid_namespace_before_exec(spec.walls, &step);
  if (err == 0) err = drop_to_user_before_exec(spec.walls, &step);
  if (err == 0 && spec.walls.landlock) err = install_landlock_before_exec(spec.walls.landlock_read, spec.walls.landlock_write, &step);
  if (err == 0 && spec.walls.syscall_filter) err = install_syscall_filter_before_exec(&step);
  if (err != 0) fail_in_child(step, std::strerror(err));
  if (auto why = python_become_worker(spec.environment); !why.empty()) fail_in_child("the worker's environment", why);
  std::fflush(nullptr);
  _exit(worker_main(spec.walls.host_pid));
}

// A child of the host (CLONE_PARENT), as a worker started cold is: the host waits for it and
// reads how it ended. (fork() cannot name the parent; the interpreter has one thread.)
pid_t fork_as_hosts_child() {
  return static_cast<pid_t>(syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

}  // namespace

namespace {

std::set<std::string> g_interpreter_objects;  // what the imports loaded (unwatched in the workers)

// A fork that reads Python files' text (the bridge's scan_imports) and answers through a pipe:
// nothing of what it parses stays in the interpreter.
nlohmann::json scan_in_child(const nlohmann::json& files) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {{"error", fmt::format("pipe: {}", std::strerror(errno))}};
  python_before_fork();
  const pid_t pid = fork();
  if (pid == 0) {
    python_after_fork(true);
    close(pipe_fds[0]);
    auto found = python_library("scan_imports", files);
    const std::string text = (found ? nlohmann::json{{"imports", *found}} : nlohmann::json{{"error", found.error().message}}).dump();
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = write(pipe_fds[1], text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  python_after_fork(false);
  close(pipe_fds[1]);
  std::string text;
  char buffer[65536];
  for (ssize_t n; pid > 0 && (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;)
    if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
    else if (errno != EINTR) break;
  close(pipe_fds[0]);
  if (pid < 0) return {{"error", fmt::format("fork: {}", std::strerror(errno))}};
  waitpid(pid, nullptr, 0);
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json{{"error", "the scan ended without an answer"}};
}

// Whether the interpreter may be forked now: one thread (an import's threads stopped through
// their fork handlers, as after PyTorch's imports); "" or why not.
std::string single_threaded(const char* after) {
  if (!other_threads().empty()) run_fork_handlers();
  if (const auto threads = other_threads(); !threads.empty())
    return fmt::format("the interpreter runs {} threads besides its own once {} imported ({}): it cannot be forked safely", threads.size(), after,
                       fmt::join(threads, ", "));
  return "";
}

int serve(int sock, const std::vector<std::string>& packages, char* role, bool library);

// A library interpreter (python_zygote.hpp): a child of the host, forked from this one, that
// imports `modules` and then serves spawns on `channel` for the workers of the files that import
// them. Never returns.
[[noreturn]] void become_library(int channel, const nlohmann::json& modules, const std::vector<std::string>& packages, char* role, long host_pid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the host
  if (host_pid > 0 && getppid() != host_pid) _exit(1);
  dup2(channel, STDIN_FILENO);  // its own channel where the interpreter's was
  close_range(3, ~0U, 0);
  const int sock = STDIN_FILENO;
  const std::set<std::string> before = loaded_objects();
  auto imported = python_library("preimport", modules);
  if (!imported) {
    say(sock, {{"ready", false}, {"error", imported.error().message}});
    _exit(1);
  }
  std::set<std::string> loaded = g_interpreter_objects;
  for (const auto& name : loaded_objects())
    if (!before.count(name)) loaded.insert(name);
  set_interpreter_objects(std::move(loaded));
  if (const auto why = single_threaded("its modules are"); !why.empty()) {
    say(sock, {{"ready", false}, {"error", why}});
    _exit(1);
  }
  say(sock, {{"ready", true}, {"import_s", imported->value("import_s", 0.0)}});
  _exit(serve(sock, packages, role, true));
}

// Forks a worker per "spawn" request until the host closes `sock`; the warm interpreter also
// reads files' imports ("scan") and forks library interpreters ("library"), a library one only
// workers.
int serve(int sock, const std::vector<std::string>& packages, char* role, bool library) {
  const long host_pid = getppid();
  while (true) {
    auto message = receive_packet(sock);
    if (!message) return 0;  // the host is done
    auto& [text, fds] = *message;
    const auto request = nlohmann::json::parse(text, nullptr, false);
    const std::string cmd = request.is_object() ? request.value("cmd", "") : "";
    if (!library && cmd == "scan" && fds.empty()) {
      say(sock, scan_in_child(request.value("files", nlohmann::json::array())));
      continue;
    }
    if (!library && cmd == "library" && fds.size() == 1) {
      python_before_fork();
      const pid_t pid = fork_as_hosts_child();
      if (pid == 0) {
        python_after_fork(true);
        become_library(fds[0].get(), request.value("modules", nlohmann::json::array()), packages, role, host_pid);
      }
      const int saved = errno;
      python_after_fork(false);
      say(sock, pid > 0 ? nlohmann::json{{"pid", pid}} : nlohmann::json{{"error", fmt::format("fork: {}", std::strerror(saved))}});
      continue;
    }
    if (fds.size() != 2 || cmd != "spawn") {
      say(sock, {{"error", "a request the warm interpreter does not know"}});
      continue;
    }
    auto spec = spawn_spec_from_json(request);
    if (!spec) {
      say(sock, {{"error", spec.error().message}});
      continue;
    }
    if (!(*spec)->walls.readonly_dirs.empty())  // walls asked for: the interpreter's packages among them
      for (const auto& dir : packages) {
        (*spec)->walls.readonly_dirs.push_back(dir.c_str());
        if ((*spec)->walls.landlock) (*spec)->walls.landlock_read.push_back(dir.c_str());
      }
    python_before_fork();
    const pid_t pid = fork_as_hosts_child();
    if (pid == 0) {
      python_after_fork(true);
      // Named as a worker started cold is (`ps`, /proc/<pid>/cmdline): "__zygote" and
      // "__worker" are as long.
      if (role && std::strcmp(role, "__zygote") == 0) std::memcpy(role, "__worker", 8);
      become_worker(**spec, fds[0].get(), fds[1].get());
    }
    const int saved = errno;
    python_after_fork(false);
    if (pid < 0)
      say(sock, {{"error", fmt::format("fork: {}", std::strerror(saved))}});
    else
      say(sock, {{"pid", pid}});
  }
}

}  // namespace

int python_zygote_main(long host_pid, char* role) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the host
  if (host_pid > 0 && getppid() != host_pid) return 1;
  // Not dumpable: no process without CAP_SYS_PTRACE reads or writes its memory, not even one
  // of its uid (a worker run as uid 0 without capabilities, where there is no user to give it).
  lock_down_worker();
  const int sock = STDIN_FILENO;

  // The imports, and which objects they loaded (unwatched in the workers: worker_integrity.hpp).
  const auto t0 = std::chrono::steady_clock::now();
  const std::set<std::string> before = loaded_objects();
  const std::string error = start_python_bridge();
  const double import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!error.empty()) {
    say(sock, {{"ready", false}, {"error", error}});
    return 1;
  }
  for (const auto& name : loaded_objects())
    if (!before.count(name)) g_interpreter_objects.insert(name);
  const std::size_t objects = g_interpreter_objects.size();
  set_interpreter_objects(g_interpreter_objects);
  // A fork keeps only the calling thread: one that an import left running would be missing,
  // its locks held, in every worker.
  if (const auto why = single_threaded("PyTorch and Triton are"); !why.empty()) {
    say(sock, {{"ready", false}, {"error", why}});
    return 1;
  }
  // The folders it imported from, read-only in every worker's view besides the host's list
  // (the embedded interpreter may take other packages than the python3 the host asked).
  std::vector<std::string> packages;
  for (const auto& dir : python_package_path()) {
    std::error_code ec;
    if (!dir.empty() && dir.front() == '/' && dir != "/" && std::filesystem::exists(dir, ec)) packages.push_back(dir);
  }
  say(sock, {{"ready", true}, {"import_s", import_s}, {"objects", objects}, {"packages", packages}});
  return serve(sock, packages, role, false);
}

}  // namespace bb
