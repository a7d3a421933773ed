// The warm interpreter's side (python_zygote.hpp): `backendbench __zygote HOST_PID`. It imports
// PyTorch and Triton once, says it is ready, then forks a worker per request: each child puts up
// its walls (cgroup, namespaces, HOME, its own user) and only then takes the worker's
// environment and becomes a worker (worker_main), whose first request imports the
// implementation. This process never runs an implementation's code, never makes a device
// context, and keeps one thread: a fork of it is a whole interpreter.
#include <dirent.h>
#include <poll.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

#include "plugin_library.hpp"
#include "protocol/message_channel.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/python_zygote.hpp"
#include "run/workers/sandbox.hpp"
#include "run/workers/syscall_filter.hpp"
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

// A child of this process, made as fork_as_hosts_child is (no fork handlers): a kept
// interpreter's (python_kept_interpreter.hpp), which is no host's parent and says how each
// of its workers ended instead.
pid_t fork_own_child() { return static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr)); }

// The children of a kept interpreter's server: each one's pidfd (readable once it ended) and,
// for a worker, the pipe its host reads the wait status from (python_zygote.hpp: Forked).
struct OwnChildren {
  struct Child {
    pid_t pid;
    int pidfd;
    int status_fd;  // -1: a library interpreter, whose end its host does not ask
  };
  std::vector<Child> children;

  void add(pid_t pid, int status_fd) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    children.push_back({pid, pidfd, status_fd});
  }
  // Reaps every child that ended and writes its wait status to its host.
  void reap() {
    std::erase_if(children, [](Child& c) {
      int status = 0;
      if (waitpid(c.pid, &status, WNOHANG) != c.pid) return false;
      if (c.status_fd >= 0) {
        (void)!write(c.status_fd, &status, sizeof status);
        close(c.status_fd);
      }
      if (c.pidfd >= 0) close(c.pidfd);
      return true;
    });
  }
  // Waits until `sock` has something to read (true) or it is gone (false), reaping children.
  bool wait_for(int sock) {
    while (true) {
      std::vector<pollfd> p{{sock, POLLIN, 0}};
      for (const auto& c : children)
        if (c.pidfd >= 0) p.push_back({c.pidfd, POLLIN, 0});
      const int rc = poll(p.data(), p.size(), 1000);  // a child without a pidfd is reaped within a second
      reap();
      if (rc < 0 && errno != EINTR) return false;
      if (rc > 0 && p[0].revents) return true;
    }
  }
};

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

int serve(int sock, const std::vector<std::string>& packages, char* role, bool library, bool kept);

// A library interpreter (python_zygote.hpp): a child of the host, forked from this one, that
// imports `modules` and then serves spawns on `channel` for the workers of the files that import
// them. Never returns.
[[noreturn]] void become_library(int channel, const nlohmann::json& modules, const std::vector<std::string>& packages, char* role, long host_pid,
                                 bool kept) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the host (a kept interpreter's server: its parent)
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
  _exit(serve(sock, packages, role, true, kept));
}

// Forks a worker per "spawn" request until the host closes `sock`; the warm interpreter also
// reads files' imports ("scan") and forks library interpreters ("library"), a library one only
// workers. `kept`: a kept interpreter's server (python_kept_interpreter.hpp), whose workers are
// its own children: each request brings a third descriptor, where it writes how the worker ended.
int serve(int sock, const std::vector<std::string>& packages, char* role, bool library, bool kept) {
  const long host_pid = kept ? getpid() : getppid();  // the parent every child checks it has
  OwnChildren own;
  while (true) {
    if (kept && !own.wait_for(sock)) return 0;
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
      const pid_t pid = kept ? fork_own_child() : fork_as_hosts_child();
      if (pid == 0) {
        python_after_fork(true);
        become_library(fds[0].get(), request.value("modules", nlohmann::json::array()), packages, role, host_pid, kept);
      }
      const int saved = errno;
      python_after_fork(false);
      if (kept && pid > 0) own.add(pid, -1);
      say(sock, pid > 0 ? nlohmann::json{{"pid", pid}} : nlohmann::json{{"error", fmt::format("fork: {}", std::strerror(saved))}});
      continue;
    }
    if (fds.size() != (kept ? 3u : 2u) || cmd != "spawn") {
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
    if (kept) (*spec)->walls.host_pid = host_pid;  // its parent is this process, not the host
    python_before_fork();
    const pid_t pid = kept ? fork_own_child() : fork_as_hosts_child();
    if (pid == 0) {
      python_after_fork(true);
      // Named as a worker started cold is (`ps`, /proc/<pid>/cmdline): "__zygote" and
      // "__worker" are as long.
      if (role && std::strcmp(role, "__zygote") == 0) std::memcpy(role, "__worker", 8);
      become_worker(**spec, fds[0].get(), fds[1].get());
    }
    const int saved = errno;
    python_after_fork(false);
    if (pid > 0) setpgid(pid, pid);  // its own group before the host signals it (it also sets it)
    if (kept && pid > 0) own.add(pid, fds[2].release());
    if (pid < 0)
      say(sock, {{"error", fmt::format("fork: {}", std::strerror(saved))}});
    else
      say(sock, {{"pid", pid}});
  }
}

}  // namespace

namespace {

// The warm interpreter's imports, shared by the run's own and a kept one: PyTorch and Triton,
// which objects they loaded (unwatched in the workers: worker_integrity.hpp), whether the
// process may be forked, and the folders it imported from (read-only in every worker's view
// besides the host's list: the embedded interpreter may take other packages than the python3
// the host asked).
struct WarmImports {
  std::string error;
  double import_s = 0;
  std::size_t objects = 0;
  std::vector<std::string> packages;
};

WarmImports import_warm() {
  WarmImports w;
  const auto t0 = std::chrono::steady_clock::now();
  const std::set<std::string> before = loaded_objects();
  w.error = start_python_bridge();
  w.import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!w.error.empty()) return w;
  for (const auto& name : loaded_objects())
    if (!before.count(name)) g_interpreter_objects.insert(name);
  w.objects = g_interpreter_objects.size();
  set_interpreter_objects(g_interpreter_objects);
  // A fork keeps only the calling thread: one that an import left running would be missing,
  // its locks held, in every worker.
  if (w.error = single_threaded("PyTorch and Triton are"); !w.error.empty()) return w;
  for (const auto& dir : python_package_path()) {
    std::error_code ec;
    if (!dir.empty() && dir.front() == '/' && dir != "/" && std::filesystem::exists(dir, ec)) w.packages.push_back(dir);
  }
  return w;
}

}  // namespace

int python_zygote_main(long host_pid, char* role) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the host
  if (host_pid > 0 && getppid() != host_pid) return 1;
  // Not dumpable: no process without CAP_SYS_PTRACE reads or writes its memory, not even one
  // of its uid (a worker run as uid 0 without capabilities, where there is no user to give it).
  lock_down_worker();
  const int sock = STDIN_FILENO;
  const WarmImports w = import_warm();
  if (!w.error.empty()) {
    say(sock, {{"ready", false}, {"error", w.error}});
    return 1;
  }
  say(sock, {{"ready", true}, {"import_s", w.import_s}, {"objects", w.objects}, {"packages", w.packages}});
  return serve(sock, w.packages, role, false, false);
}

namespace {

// What the kept interpreter's imports rest on, as it was when they were made: every object
// loaded (this binary, PyTorch's and Triton's libraries) and the package folders (a package
// installed, removed or upgraded changes its folder). "" while all are as they were, else what
// changed: its next run then starts a new interpreter.
class ImportStamp {
 public:
  void take(const std::vector<std::string>& packages) {
    for (const auto& path : loaded_objects()) add(path);
    for (const auto& dir : packages) add(dir);
  }
  std::string changed() const {
    for (const auto& [path, was] : files_) {
      struct stat now {};
      if (stat(path.c_str(), &now) != 0) return path + " is gone";
      if (now.st_ino != was.st_ino || now.st_dev != was.st_dev || now.st_size != was.st_size || now.st_mtim.tv_sec != was.st_mtim.tv_sec ||
          now.st_mtim.tv_nsec != was.st_mtim.tv_nsec)
        return path + " changed";
    }
    return "";
  }

 private:
  void add(const std::string& path) {
    struct stat st {};
    if (!path.empty() && path.front() == '/' && stat(path.c_str(), &st) == 0) files_.emplace_back(path, st);
  }
  std::vector<std::pair<std::string, struct stat>> files_;
};

// 32 hex digits from the kernel's generator.
std::string random_token() {
  unsigned char bytes[16] = {};
  for (std::size_t at = 0; at < sizeof bytes;)
    if (const ssize_t n = getrandom(bytes + at, sizeof bytes - at, 0); n > 0) at += static_cast<std::size_t>(n);
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

// Whether the process at the other end of `conn` is a host of this machine's runs as this one
// was: the same user and capabilities, the same mount and PID namespaces (a worker has fewer
// capabilities and namespaces of its own; its view hides the folder and the token besides).
std::string peer_refused(int conn) {
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) return "no credentials";
  if (peer.uid != getuid()) return fmt::format("uid {}", peer.uid);
  // Not less able than this process: a worker drops every capability it had.
  auto capabilities = [](const std::string& pid) -> unsigned long long {
    FILE* f = std::fopen(fmt::format("/proc/{}/status", pid).c_str(), "r");
    unsigned long long caps = 0;
    for (char line[256]; f && std::fgets(line, sizeof line, f);)
      if (std::sscanf(line, "CapEff: %llx", &caps) == 1) break;
    if (f) std::fclose(f);
    return caps;
  };
  if (const auto mine = capabilities("self"); (capabilities(std::to_string(peer.pid)) & mine) != mine)
    return fmt::format("pid {} has fewer capabilities", peer.pid);
  for (const char* ns : {"mnt", "pid"}) {
    struct stat mine {}, theirs {};
    if (stat(fmt::format("/proc/self/ns/{}", ns).c_str(), &mine) != 0 || stat(fmt::format("/proc/{}/ns/{}", peer.pid, ns).c_str(), &theirs) != 0 ||
        mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev)
      return fmt::format("pid {} is in another {} namespace", peer.pid, ns);
  }
  return "";
}

}  // namespace

int python_kept_main(const std::string& socket_path, double idle_seconds, char* role) {
  lock_down_worker();
  signal(SIGPIPE, SIG_IGN);
  umask(077);
  // The token a host must send (python_kept_interpreter.hpp), written before the socket exists.
  const std::string token = random_token();
  const std::string token_path = socket_path.substr(0, socket_path.size() - 5) + ".token";
  {
    const std::string tmp = token_path + ".new";
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || write(fd, token.data(), token.size()) != static_cast<ssize_t>(token.size()) || close(fd) != 0 ||
        rename(tmp.c_str(), token_path.c_str()) != 0)
      return 1;
  }
  const int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (listener < 0 || socket_path.size() >= sizeof addr.sun_path) return 1;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  unlink(socket_path.c_str());
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 64) != 0) return 1;
  struct stat bound {};
  stat(socket_path.c_str(), &bound);
  // Gone: the socket and the token taken away, unless a newer interpreter's are there now.
  auto leave = [&](int code) {
    struct stat now {};
    if (stat(socket_path.c_str(), &now) == 0 && now.st_ino == bound.st_ino) {
      unlink(socket_path.c_str());
      unlink(token_path.c_str());
    }
    return code;
  };

  const auto born = std::chrono::steady_clock::now();
  const WarmImports w = import_warm();
  ImportStamp stamp;
  if (w.error.empty()) stamp.take(w.packages);
  int runs = 0, sessions = 0;
  auto last_end = std::chrono::steady_clock::now();
  while (true) {
    pollfd p{listener, POLLIN, 0};
    const int rc = poll(&p, 1, 1000);
    for (int status; waitpid(-1, &status, WNOHANG) > 0;) {
      --sessions;
      last_end = std::chrono::steady_clock::now();
    }
    if (rc <= 0) {
      if (sessions <= 0 && std::chrono::steady_clock::now() - last_end > std::chrono::duration<double>(idle_seconds)) return leave(0);
      continue;
    }
    const int conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    auto refuse = [&](const nlohmann::json& why) {
      say(conn, why);
      close(conn);
    };
    if (const auto why = peer_refused(conn); !why.empty()) {
      refuse({{"ready", false}, {"error", "refused: " + why}});
      continue;
    }
    // The host's first message: the token, and the folder its workers start in.
    pollfd hp{conn, POLLIN, 0};
    auto hello = poll(&hp, 1, 5000) > 0 ? receive_packet(conn) : std::nullopt;
    const auto h = hello ? nlohmann::json::parse(hello->first, nullptr, false) : nlohmann::json();
    if (!h.is_object() || h.value("token", "") != token) {
      refuse({{"ready", false}, {"error", "refused: no token, or not this interpreter's"}});
      continue;
    }
    // Gone before it answers: a host that reconnects as soon as it reads the answer finds no
    // listener and starts a new interpreter (one still listening would take its connection and
    // close it unanswered: "it ended before it answered").
    auto end_with = [&](const nlohmann::json& why, int code) {
      close(listener);
      code = leave(code);
      refuse(why);
      return code;
    };
    if (!w.error.empty()) return end_with({{"ready", false}, {"error", w.error}}, 1);
    if (const auto changed = stamp.changed(); !changed.empty()) return end_with({{"ready", false}, {"stale", changed}}, 0);
    const double age_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - born).count();
    python_before_fork();
    const pid_t pid = fork_own_child();
    if (pid == 0) {
      python_after_fork(true);
      close(listener);
      if (dup2(conn, STDIN_FILENO) < 0) _exit(1);
      close(conn);
      const std::string cwd = h.value("cwd", "/");
      if (chdir(cwd.c_str()) != 0) (void)!chdir("/");
      say(STDIN_FILENO, {{"ready", true}, {"import_s", w.import_s}, {"objects", w.objects}, {"packages", w.packages},
                         {"kept", {{"runs", runs}, {"age_s", age_s}, {"pid", getppid()}}}});
      _exit(serve(STDIN_FILENO, w.packages, role, false, true));
    }
    python_after_fork(false);
    close(conn);
    if (pid > 0) ++sessions, ++runs;
  }
}

}  // namespace bb
