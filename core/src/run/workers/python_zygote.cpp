// The warm interpreter, the host's side: started once, asked for each Python worker
// (python_zygote.hpp). Its protocol: a SOCK_SEQPACKET socket, one JSON message each way per
// worker, the worker's two descriptors (its protocol socket, its output pipe) beside the request.
#include "run/workers/python_zygote.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "protocol/message_channel.hpp"
#include "run/workers/python_kept_interpreter.hpp"
#include "run/workers/syscall_filter.hpp"
#include "trace.hpp"

namespace bb {

nlohmann::json spawn_request(const PreparedSandbox& walls, const std::vector<char*>& environment, std::size_t memory_bytes) {
  auto text = [](const char* s) { return s ? nlohmann::json(s) : nlohmann::json(); };
  auto texts = [](const std::vector<const char*>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const char* s : v) a.push_back(s);
    return a;
  };
  nlohmann::json env = nlohmann::json::array();
  for (const char* e : environment)
    if (e) env.push_back(e);
  return {{"cmd", "spawn"},
          {"namespaces", walls.namespaces},
          {"cgroup_procs", text(walls.cgroup_procs)},
          {"hidden_dirs", texts(walls.hidden_dirs)},
          {"hidden_files", texts(walls.hidden_files)},
          {"readonly_dirs", texts(walls.readonly_dirs)},
          {"passwd_file", text(walls.passwd_file)},
          {"group_file", text(walls.group_file)},
          {"home_dir", text(walls.home_dir)},
          {"home_options", text(walls.home_options)},
          {"home_tmp", text(walls.home_tmp)},
          {"landlock", walls.landlock},
          {"landlock_read", texts(walls.landlock_read)},
          {"landlock_write", texts(walls.landlock_write)},
          {"uid", walls.uid},
          {"drop_capabilities", walls.drop_capabilities},
          {"groups", walls.groups},
          {"host_pid", walls.host_pid},
          {"syscall_filter", walls.syscall_filter},
          {"memory_bytes", memory_bytes},
          {"environment", env}};
}

Expected<std::unique_ptr<SpawnSpec>> spawn_spec_from_json(const nlohmann::json& j) {
  try {
    auto spec = std::make_unique<SpawnSpec>();
    auto& strings = spec->strings_;
    // Every string kept first (no reallocation moves them after a pointer is taken).
    std::size_t n = 0;
    for (const char* key : {"hidden_dirs", "hidden_files", "readonly_dirs"}) n += j.at(key).size();
    for (const char* key : {"landlock_read", "landlock_write"}) n += j.value(key, nlohmann::json::array()).size();
    strings.reserve(n + 6);
    auto keep = [&](const nlohmann::json& v) -> const char* {
      if (v.is_null()) return nullptr;
      strings.push_back(v.get<std::string>());
      return strings.back().c_str();
    };
    PreparedSandbox& w = spec->walls;
    w.namespaces = j.at("namespaces").get<bool>();
    w.cgroup_procs = keep(j.at("cgroup_procs"));
    for (const auto& d : j.at("hidden_dirs")) w.hidden_dirs.push_back(keep(d));
    for (const auto& f : j.at("hidden_files")) w.hidden_files.push_back(keep(f));
    for (const auto& d : j.at("readonly_dirs")) w.readonly_dirs.push_back(keep(d));
    w.passwd_file = keep(j.at("passwd_file"));
    w.group_file = keep(j.at("group_file"));
    w.home_dir = keep(j.at("home_dir"));
    w.home_options = keep(j.at("home_options"));
    w.home_tmp = keep(j.value("home_tmp", nlohmann::json()));
    w.landlock = j.value("landlock", false);
    for (const auto& d : j.value("landlock_read", nlohmann::json::array())) w.landlock_read.push_back(keep(d));
    for (const auto& d : j.value("landlock_write", nlohmann::json::array())) w.landlock_write.push_back(keep(d));
    w.uid = j.at("uid").get<long>();
    w.drop_capabilities = j.at("drop_capabilities").get<bool>();
    w.groups = j.at("groups").get<std::vector<unsigned>>();
    w.host_pid = j.at("host_pid").get<long>();
    w.syscall_filter = j.value("syscall_filter", false);
    if (w.syscall_filter) prepare_syscall_filter();  // in the interpreter's process, before its fork
    spec->memory_bytes = j.at("memory_bytes").get<std::size_t>();
    spec->environment = j.at("environment").get<std::vector<std::string>>();
    return spec;
  } catch (const std::exception& e) {
    return make_error(fmt::format("a spawn request the warm interpreter cannot read: {}", e.what()));
  }
}

PythonZygote& PythonZygote::get() {
  static auto* z = new PythonZygote();  // never destroyed: workers may still be asked for at exit
  return *z;
}

bool PythonZygote::started() const { return started_; }

namespace {
// Whether `fd` has something to read within `seconds` (a signal the host handles does not cut
// the wait short).
bool readable_within(int fd, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    const int rc = poll(&p, 1, static_cast<int>(std::max<long long>(0, left)));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}
// A socket for one interpreter's requests, with room for a whole request.
bool interpreter_socket(int sv[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return false;
  for (int k = 0; k < 2; ++k) make_room_for_packets(sv[k]);
  return true;
}

}  // namespace

void PythonZygote::give_up(std::string why) {
  error_ = std::move(why);
  ready_ = false;
  started_ = false;
  if (keeping_) {  // it serves other runs: this one lets it go
    if (sock_ >= 0) close(sock_);
    sock_ = -1;
    return;
  }
  if (pid_ > 0) {
    kill(static_cast<pid_t>(-pid_), SIGKILL);
    waitpid(static_cast<pid_t>(pid_), nullptr, 0);
  }
}

void PythonZygote::start(const std::string& binary, std::size_t memory_bytes) {
  std::lock_guard lock(mutex_);
  if (pid_ > 0 || !error_.empty()) return;
  if (const char* cold = std::getenv("BACKENDBENCH_COLD_PYTHON"); cold && *cold && std::strcmp(cold, "0") != 0) {
    error_ = "BACKENDBENCH_COLD_PYTHON is set";  // diagnosis: each Python worker imports for itself
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int sv[2];  // a request that does not fit starts its worker cold
  if (!interpreter_socket(sv)) {
    error_ = fmt::format("no socket for the warm interpreter: {}", std::strerror(errno));
    return;
  }
  // Prepared before fork: the child may not allocate.
  const std::string host_pid = std::to_string(getpid());
  // The host's environment less what no worker gets (worker_home.hpp: the host's XDG folders);
  // each worker then takes its own (become_worker), but the one exec'd here is what a worker's
  // /proc/self/environ shows.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("LD_BIND_NOW=") || v.starts_with("XDG_CACHE_HOME=") || v.starts_with("XDG_CONFIG_HOME=") ||
        v.starts_with("XDG_DATA_HOME=") || v.starts_with("XDG_STATE_HOME=") || v.starts_with("XDG_RUNTIME_DIR="))
      continue;
    env_text.emplace_back(*e);
  }
  env_text.emplace_back("LD_BIND_NOW=1");  // as every worker: its own objects bound at load
  binary_ = binary;
  environment_ = env_text;
  memory_bytes_ = memory_bytes;
  if (const auto refused = kept_interpreter_refused(); keep_warm_seconds() > 0 && !refused.empty()) {
    kept_ = {{"error", refused}};
  } else if (keep_warm_seconds() > 0) {
    if (connect_kept()) {
      started_ = true;
      trace_line({{"side", "start"}, {"what", "warm_interpreter"}, {"kept", kept_},
                  {"fork_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
      return;
    }
    close(sv[0]);
    close(sv[1]);
    if (!interpreter_socket(sv)) {
      error_ = fmt::format("no socket for the warm interpreter: {}", std::strerror(errno));
      return;
    }
  }
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    error_ = fmt::format("the warm interpreter could not be started: {}", std::strerror(errno));
    close(sv[0]);
    close(sv[1]);
    return;
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (memory_bytes > 0) {
      const rlimit lim{static_cast<rlim_t>(memory_bytes), static_cast<rlim_t>(memory_bytes)};
      setrlimit(RLIMIT_DATA, &lim);
    }
    dup2(sv[1], STDIN_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO);
    close_range(3, ~0U, 0);
    char* const argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("__zygote"), const_cast<char*>(host_pid.c_str()), nullptr};
    execve(binary.c_str(), argv, env.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(sv[1]);
  sock_ = sv[0];
  pid_ = pid;
  started_ = true;
  trace_line({{"side", "start"}, {"what", "warm_interpreter"}, {"pid", pid},
              {"fork_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
}

bool PythonZygote::connect_kept() {
  auto c = connect_kept_interpreter(binary_, environment_, memory_bytes_, keep_warm_seconds());
  if (!c) {
    kept_ = {{"error", c.error().message}};
    keeping_ = false;
    return false;
  }
  if (sock_ >= 0) close(sock_);
  sock_ = c->sock;
  pid_ = c->pid;
  keeping_ = true;
  kept_ = {{"pid", c->pid}, {"started", c->started}, {"socket", c->socket_path}};
  return true;
}

bool PythonZygote::wait_ready(double wait_seconds) {
  if (ready_) return true;
  if (!error_.empty()) return false;
  if (pid_ <= 0) {
    error_ = "the warm interpreter was not started";
    return false;
  }
  const auto asked = std::chrono::steady_clock::now();
  bool answered = readable_within(sock_, wait_seconds);
  auto reply = answered ? receive_packet(sock_) : std::nullopt;
  // A kept interpreter that has just ended (idle, or what its imports rest on changed: "stale")
  // makes way for a new one, once.
  std::string first_why;  // why the first was replaced (the cause; a second try's is its consequence)
  for (int again = 0; keeping_ && again < 2; ++again) {
    const auto j = reply ? nlohmann::json::parse(reply->first, nullptr, false) : nlohmann::json();
    if (reply && !(j.is_object() && j.contains("stale"))) break;
    const std::string why = reply ? "what its imports rest on changed: " + j.value("stale", std::string()) : "it ended before it answered";
    if (first_why.empty()) first_why = why;
    if (!connect_kept()) break;
    kept_["replaced"] = first_why;
    answered = readable_within(sock_, wait_seconds);
    reply = answered ? receive_packet(sock_) : std::nullopt;
  }
  if (!reply) {
    give_up(answered ? "the warm interpreter ended while importing (see a Python worker started cold for why)"
                     : fmt::format("the warm interpreter was not ready after {:.0f} s", wait_seconds));
    return false;
  }
  const auto j = nlohmann::json::parse(reply->first, nullptr, false);
  if (!j.is_object() || !j.value("ready", false)) {
    give_up(j.is_object() ? j.value("error", std::string("an unreadable answer")) : "an unreadable answer");
    trace_line({{"side", "start"}, {"what", "warm_interpreter_failed"}, {"error", error_}});
    return false;
  }
  import_s_ = j.value("import_s", 0.0);
  if (keeping_) {
    const auto kept = j.value("kept", nlohmann::json::object());
    kept_["runs"] = kept.value("runs", 0);
    kept_["age_s"] = kept.value("age_s", 0.0);
    kept_["ready_wait_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  }
  trace_line({{"side", "start"}, {"what", "warm_interpreter_ready"}, {"import_s", import_s_}, {"objects", j.value("objects", 0)}, {"kept", kept_}});
  ready_ = true;
  return true;
}

namespace {
// The interpreter's answer to one request on `sock`, parsed; null where none came in `seconds`.
nlohmann::json answer(int sock, double seconds) {
  auto reply = readable_within(sock, seconds) ? receive_packet(sock) : std::nullopt;
  if (!reply) return nullptr;
  auto j = nlohmann::json::parse(reply->first, nullptr, false);
  return j.is_object() ? j : nlohmann::json{{"error", "an unreadable answer"}};
}
}  // namespace

void PythonZygote::preload(const std::vector<std::string>& files, double wait_seconds) {
  if (files.empty() || !started_) return;
  std::lock_guard lock(mutex_);
  if (!libraries_.empty() || !wait_ready(wait_seconds)) return;
  const auto t0 = std::chrono::steady_clock::now();
  if (!send_packet(sock_, nlohmann::json{{"cmd", "scan"}, {"files", files}}.dump())) {
    give_up(fmt::format("the warm interpreter is gone: {}", std::strerror(errno)));
    return;
  }
  const auto scanned = answer(sock_, 30);
  if (scanned.is_null()) {
    give_up("the warm interpreter stopped answering");
    return;
  }
  const auto imports = scanned.value("imports", nlohmann::json::object());
  trace_line({{"side", "start"}, {"what", "library_scan"}, {"files", files.size()}, {"error", scanned.value("error", "")},
              {"s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
  std::map<std::vector<std::string>, std::vector<std::string>> by_modules;
  for (const auto& [file, modules] : imports.items())
    if (modules.is_array() && !modules.empty()) by_modules[modules.get<std::vector<std::string>>()].push_back(file);
  for (const auto& [modules, its_files] : by_modules) {
    if (libraries_.size() >= kMaxLibraries) break;
    int sv[2];
    if (!interpreter_socket(sv)) break;
    const bool sent = send_packet(sock_, nlohmann::json{{"cmd", "library"}, {"modules", modules}}.dump(), {sv[1]});
    close(sv[1]);
    const auto forked = sent ? answer(sock_, 30) : nlohmann::json();
    if (!sent || forked.is_null()) {
      close(sv[0]);
      give_up("the warm interpreter stopped answering");
      return;
    }
    const long pid = forked.value("pid", -1L);
    if (pid <= 0) {
      close(sv[0]);
      continue;
    }
    auto lib = std::make_unique<Library>();
    lib->sock = sv[0];
    lib->pid = pid;
    lib->modules = modules;
    lib->files = its_files;
    for (const auto& f : its_files) library_for_[f] = lib.get();
    trace_line({{"side", "start"}, {"what", "library_interpreter"}, {"pid", pid}, {"modules", modules}, {"files", its_files}});
    libraries_.push_back(std::move(lib));
  }
}

nlohmann::json PythonZygote::ask_fork(int sock, const nlohmann::json& request, int protocol_fd, int output_fd, int* status_fd, bool* sent) {
  *status_fd = -1;
  std::vector<int> fds{protocol_fd, output_fd};
  int status_pipe[2] = {-1, -1};
  if (keeping_) {
    if (pipe2(status_pipe, O_CLOEXEC) != 0) {
      *sent = false;
      return nullptr;
    }
    fds.push_back(status_pipe[1]);
  }
  *sent = send_packet(sock, request.dump(), fds);
  const int saved = errno;
  if (status_pipe[1] >= 0) close(status_pipe[1]);
  auto j = *sent ? answer(sock, 30) : nlohmann::json();
  if (j.is_object() && j.value("pid", -1L) > 0) *status_fd = status_pipe[0];
  else if (status_pipe[0] >= 0) close(status_pipe[0]);
  errno = saved;
  return j;
}

Expected<PythonZygote::Forked> PythonZygote::spawn_from_library(Library& lib, const nlohmann::json& request, int protocol_fd, int output_fd) {
  std::lock_guard lock(lib.mutex);
  auto fail = [&](std::string why) -> Expected<Forked> {
    lib.error = std::move(why);
    lib.ready = false;
    if (lib.pid > 0) {
      kill(static_cast<pid_t>(lib.pid), SIGKILL);
      waitpid(static_cast<pid_t>(lib.pid), nullptr, 0);  // (a kept interpreter's server reaps its own)
      lib.pid = -1;
    }
    trace_line({{"side", "start"}, {"what", "library_interpreter_failed"}, {"modules", lib.modules}, {"error", lib.error}});
    return make_error(lib.error);
  };
  if (!lib.error.empty()) return make_error(lib.error);
  if (!lib.ready) {
    // Never waited for: a worker asked for before its imports are done is forked from the warm
    // interpreter and imports them itself (as it would without one), the later ones from here.
    // (A library whose import starts threads or initialises CUDA is refused once done: its
    // worker had waited for nothing.)
    if (!readable_within(lib.sock, 0)) return make_error("its library interpreter is still importing");
    const auto ready = answer(lib.sock, 0);
    if (ready.is_null()) return fail("it ended while importing");
    if (!ready.value("ready", false)) return fail(ready.value("error", std::string("it could not import them")));
    lib.ready = true;
    lib.import_s = ready.value("import_s", 0.0);
    trace_line({{"side", "start"}, {"what", "library_interpreter_ready"}, {"modules", lib.modules}, {"import_s", lib.import_s}});
  }
  Forked forked;
  bool sent = false;
  const auto j = ask_fork(lib.sock, request, protocol_fd, output_fd, &forked.status_fd, &sent);
  if (!sent) {
    if (errno == EMSGSIZE) return make_error("the worker's environment does not fit a request to the warm interpreter");
    return fail(fmt::format("it is gone: {}", std::strerror(errno)));
  }
  if (j.is_null()) return fail("it stopped answering");
  forked.pid = j.value("pid", -1L);
  if (forked.pid <= 0) return make_error(j.value("error", std::string("no worker forked")));
  ++lib.forks;
  return forked;
}

Expected<PythonZygote::Forked> PythonZygote::spawn(const nlohmann::json& request, int protocol_fd, int output_fd, double wait_seconds,
                                                   const std::string& file) {
  if (!file.empty()) {
    Library* lib = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (auto it = library_for_.find(file); it != library_for_.end()) lib = it->second;
    }
    if (lib) {
      const auto t0 = std::chrono::steady_clock::now();
      auto forked = spawn_from_library(*lib, request, protocol_fd, output_fd);
      if (forked) {
        std::lock_guard lock(mutex_);
        count_fork(t0);
        return forked;
      }
      // Else from the warm interpreter: the worker imports its modules itself (and says what fails).
    }
  }
  std::lock_guard lock(mutex_);
  if (!wait_ready(wait_seconds)) return make_error(error_);
  const auto t0 = std::chrono::steady_clock::now();
  Forked forked;
  bool sent = false;
  const auto j = ask_fork(sock_, request, protocol_fd, output_fd, &forked.status_fd, &sent);
  if (!sent) {
    if (errno == EMSGSIZE) return make_error("the worker's environment does not fit a request to the warm interpreter");  // this one only
    give_up(fmt::format("the warm interpreter is gone: {}", std::strerror(errno)));
    return make_error(error_);
  }
  // It answers at once (a fork); one that does not is stopped or dead, and no longer asked. (A
  // worker it forked before that is this process's child, left to end on its closed socket.)
  if (j.is_null()) {
    give_up("the warm interpreter stopped answering");
    return make_error(error_);
  }
  forked.pid = j.value("pid", -1L);
  if (forked.pid <= 0) return make_error(j.value("error", std::string("no worker forked")));
  count_fork(t0);
  return forked;
}

void PythonZygote::count_fork(std::chrono::steady_clock::time_point asked) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  ++forks_;
  fork_sum_ += s;
  fork_max_ = std::max(fork_max_, s);
}

nlohmann::json PythonZygote::summary() const {
  std::lock_guard lock(mutex_);
  if (pid_ <= 0 && error_.empty()) return nullptr;
  if (!ready_ && !error_.empty()) return {{"error", error_}, {"import_s", import_s_}, {"forks", forks_}};
  nlohmann::json out = {{"import_s", import_s_}, {"forks", forks_}, {"fork_s_max", fork_max_}, {"fork_s_sum", fork_sum_}};
  if (!kept_.is_null()) out["kept"] = kept_;
  for (const auto& lib : libraries_) {
    std::lock_guard lib_lock(lib->mutex);
    nlohmann::json l = {{"modules", lib->modules}, {"files", lib->files.size()}, {"forks", lib->forks}};
    if (lib->ready) l["import_s"] = lib->import_s;
    if (!lib->error.empty()) l["error"] = lib->error;
    out["libraries"].push_back(l);
  }
  return out;
}

}  // namespace bb
