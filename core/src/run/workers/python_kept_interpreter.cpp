// The warm interpreter kept between runs, the host's side (python_kept_interpreter.hpp).
#include "run/workers/python_kept_interpreter.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backendbench/detail/python_bridge.h"
#include "protocol/message_channel.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/sandbox.hpp"

namespace bb {

double keep_warm_seconds() {
  const char* text = std::getenv("BACKENDBENCH_KEEP_WARM");
  if (!text || !*text) return 900;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return (end && *end == '\0' && v >= 0 && v < 1e7) ? v : 900;
}

std::string kept_interpreter_refused() {
  const auto& s = sandbox_support();
  if (s.drop_user || s.namespaces || landlock_supported()) return "";
  return "no wall keeps workers from it here (no user of their own, no namespaces, no Landlock view)";
}

Expected<std::string> kept_interpreter_dir() {
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  const std::string dir = ((ec ? std::filesystem::path("/tmp") : tmp) / fmt::format("backendbench-kept-{}", geteuid())).string();
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return make_error(fmt::format("{}: {}", dir, std::strerror(errno)));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return make_error(fmt::format("{}: {}", dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
    return make_error(fmt::format("{} is not a folder of uid {} closed to others (mode {:o}, owner {})", dir, geteuid(), st.st_mode & 07777, st.st_uid));
  return dir;
}

namespace {

// FNV-1a, 64 bits: a name for one kept interpreter's inputs (not a secret).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator: "ab","c" is not "a","bc"
  }
};

// The host's own settings reach the interpreter's imports only through the Python it names (and
// the site it found there); the rest (a trace's file, the run's scratch folder) are one run's.
bool hosts_own(std::string_view name) {
  return name.starts_with("BACKENDBENCH_") && name != BB_PYTHON_ENV && name != BB_PYTHON_SITE_ENV;
}

// What makes one kept interpreter serve a run: the binary it runs, the user, the memory limit,
// the environment its imports saw (less what only the shell uses).
std::string interpreter_key(const std::string& binary, const std::vector<std::string>& environment, std::size_t memory_bytes) {
  Fnv f;
  std::error_code ec;
  const auto real = std::filesystem::canonical(binary, ec);
  f.add(ec ? binary : real.string());
  struct stat st {};
  if (stat(binary.c_str(), &st) == 0)
    f.add(fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
  f.add(fmt::format("uid {} memory {}", geteuid(), memory_bytes));
  std::vector<std::string> env;
  for (const auto& e : environment) {
    const std::string_view name = std::string_view(e).substr(0, e.find('='));
    static constexpr std::string_view kShell[] = {"PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES"};
    if (!hosts_own(name) && std::find(std::begin(kShell), std::end(kShell), name) == std::end(kShell)) env.push_back(e);
  }
  std::sort(env.begin(), env.end());
  for (const auto& e : env) f.add(e);
  return fmt::format("{:016x}", f.h);
}

// A connection to the interpreter at `path`, its token sent; -1 where none listens there.
int try_connect(const std::string& path, const std::string& token_path, long* peer_pid) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return -1;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) return -1;
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(sock);
    return -1;
  }
  make_room_for_packets(sock);  // a whole spawn request
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != geteuid()) {  // not one of ours
    close(sock);
    return -1;
  }
  *peer_pid = peer.pid;
  std::string token;
  const int fd = open(token_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid()) {
    char text[64] = {};
    const ssize_t n = read(fd, text, sizeof text - 1);
    if (n > 0) token.assign(text, static_cast<std::size_t>(n));
  }
  if (fd >= 0) close(fd);
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (!send_packet(sock, nlohmann::json{{"token", token}, {"cwd", ec ? std::string("/") : cwd.string()}}.dump())) {
    close(sock);
    return -1;
  }
  return sock;
}

// Starts `binary __zygote keep PATH IDLE` in a session of its own (no child of this process, no
// descriptor of it: its output goes to LOG).
bool start_kept(const std::string& binary, const std::vector<std::string>& environment, std::size_t memory_bytes, const std::string& path,
                const std::string& log, double idle_seconds) {
  // Everything made before fork: the host has threads, the child may not allocate.
  const std::string idle = fmt::format("{:.0f}", idle_seconds);
  std::vector<std::string> env_text = environment;
  std::erase_if(env_text, [](const std::string& e) { return hosts_own(e.substr(0, e.find('='))); });  // the first run's, not the next
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  char* const argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("__zygote"), const_cast<char*>("keep"), const_cast<char*>(path.c_str()),
                        const_cast<char*>(idle.c_str()), nullptr};
  const pid_t first = fork();
  if (first < 0) return false;
  if (first == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    if (memory_bytes > 0) {
      const rlimit lim{static_cast<rlim_t>(memory_bytes), static_cast<rlim_t>(memory_bytes)};
      setrlimit(RLIMIT_DATA, &lim);
    }
    if (chdir("/") != 0) _exit(126);
    const int null = open("/dev/null", O_RDWR);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    dup2(null, STDIN_FILENO);
    dup2(out >= 0 ? out : null, STDOUT_FILENO);
    dup2(out >= 0 ? out : null, STDERR_FILENO);
    close_range(3, ~0U, 0);
    execve(binary.c_str(), argv, env.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Expected<KeptConnection> connect_kept_interpreter(const std::string& binary, const std::vector<std::string>& environment, std::size_t memory_bytes,
                                                  double idle_seconds) {
  auto dir = kept_interpreter_dir();
  if (!dir) return make_error(dir.error().message);
  const std::string base = fmt::format("{}/python-{}", *dir, interpreter_key(binary, environment, memory_bytes));
  KeptConnection c;
  c.socket_path = base + ".sock";
  const std::string token_path = base + ".token";
  if ((c.sock = try_connect(c.socket_path, token_path, &c.pid)) >= 0) return c;
  // None answers: start one, one host at a time (two runs starting at once share it).
  const int lock = open((base + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) return make_error(fmt::format("{}.lock: {}", base, std::strerror(errno)));
  while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
  }
  if ((c.sock = try_connect(c.socket_path, token_path, &c.pid)) < 0) {
    if (!start_kept(binary, environment, memory_bytes, c.socket_path, base + ".log", idle_seconds)) {
      close(lock);
      return make_error("the kept interpreter could not be started");
    }
    c.started = true;
    // It binds its socket before it imports anything: a few milliseconds.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((c.sock = try_connect(c.socket_path, token_path, &c.pid)) < 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  close(lock);  // and its lock with it
  if (c.sock < 0) return make_error(fmt::format("no kept interpreter answers at {} (its log: {}.log)", c.socket_path, base));
  return c;
}

}  // namespace bb
