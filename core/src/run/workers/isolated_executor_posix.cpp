// Tests in a worker process: fork + exec of the host binary as `__worker`, requests and replies
// over a Unix socket (lines of JSON, sealed memfds beside them: message_channel.hpp), replies
// read with a deadline and matched to their request by a nonce. A worker that dies is a crash (which signal, or which exit
// status), one that misses its deadline is killed (a timeout); either way the next request
// starts a fresh worker.
//
// What a plugin can do to the host through its worker is bounded here: the worker runs in a
// process group of its own (killed whole, so children a plugin leaves behind go with it),
// under a memory limit, with its stdout and stderr captured into the test's result (capped),
// and behind a supervisor process (worker/worker_process.cpp) that is the only parent a plugin can signal;
// inside the walls of sandbox.hpp (a cgroup of its own, namespaces, a user of its own).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "devices/host_info.hpp"
#include "plugin_library.hpp"
#include "protocol/message_channel.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/workers/crash_report.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/python_zygote.hpp"
#include "run/workers/syscall_filter.hpp"
#include "run/workers/worker_home.hpp"
#include "trace.hpp"

namespace bb {

namespace {

// Process groups of live workers, readable from a signal handler's caller without locks.
std::array<std::atomic<long>, 256> g_worker_groups{};

void register_group(long pgid) {
  for (auto& slot : g_worker_groups) {
    long expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
}
void unregister_group(long pgid) {
  for (auto& slot : g_worker_groups) {
    long expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("killed by signal SIG{} ({}){}", abbrev ? abbrev : "?", strsignal(sig),
                       WCOREDUMP(status) ? ", core dumped" : "");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return "the worker lost its connection to the host in the middle of a test (did the plugin close file descriptors it does "
           "not own?)";
  if (WIFEXITED(status)) return fmt::format("the worker exited with status {} in the middle of a test (exit() or a fatal error in the plugin)", WEXITSTATUS(status));
  return fmt::format("the worker stopped (status {})", status);
}

// A request's output: the first and the last cap/2 bytes, and the count of all.
class CapturedOutput {
 public:
  explicit CapturedOutput(std::size_t cap) : half_(cap / 2) {}
  void append(const char* p, std::size_t n) {
    total_ += n;
    const std::size_t to_head = std::min(n, half_ - std::min(half_, head_.size()));
    head_.append(p, to_head);
    p += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(p, n);
    if (tail_.size() > 2 * half_ + 4096) tail_.erase(0, tail_.size() - half_);
  }
  std::size_t total() const { return total_; }
  std::string text() const {
    if (head_.size() + tail_.size() == total_ && tail_.size() <= half_) return head_ + tail_;
    const std::string tail = tail_.size() > half_ ? tail_.substr(tail_.size() - half_) : tail_;
    return fmt::format("{}\n[... {} bytes left out ...]\n{}", head_, total_ - head_.size() - tail.size(), tail);
  }
  void clear() {
    head_.clear();
    tail_.clear();
    total_ = 0;
  }

 private:
  std::size_t half_;
  std::string head_, tail_;
  std::size_t total_ = 0;
};

// How long a Python worker's start waits for the warm interpreter's imports (the first one only;
// a worker started cold would import as long).
constexpr double kInterpreterWait = 120;
// How many of a run's crashes have their frames placed by file and line (crash_report.hpp).
constexpr int kCrashesPlaced = 32;

// The .py file a worker's first request is for (a probe, a prepare), or "".
std::string served_file(const nlohmann::json& request) {
  const auto cmd = command_of(request);
  const std::string library = cmd == WorkerCommand::probe     ? read_request<ProbeRequest>(request).library
                              : cmd == WorkerCommand::prepare ? read_request<PrepareRequest>(request).target.library
                                                        : std::string();
  return is_python_implementation(library) ? library : "";
}


// Whether a worker's first request is for Python (a .py file to probe or prepare, a survey, a
// BackendBench-py folder's tests to make): it is forked from the warm interpreter.
bool runs_python(const nlohmann::json& request) {
  switch (command_of(request).value_or(WorkerCommand::end)) {
    case WorkerCommand::generate:
    case WorkerCommand::probe_many: return true;
    case WorkerCommand::warm: return read_request<WarmRequest>(request).python;
    case WorkerCommand::probe:
    case WorkerCommand::prepare: return !served_file(request).empty();
    default: return false;
  }
}


// A worker's protocol socket and output pipe (both ends); false with errno set.
bool open_channels(int sock[2], int output[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) != 0) return false;
  if (pipe2(output, O_CLOEXEC) != 0) {
    const int saved = errno;
    for (int fd : {sock[0], sock[1]}) close(fd);
    errno = saved;
    return false;
  }
  return true;
}


// The worker's environment: its HOME's (or the host's, without walls), its slot's GPU alone
// as its device 0 (WorkerWalls).
std::vector<std::string> worker_environment(const WorkerWalls& w, const WorkerHome& home) {
  std::vector<std::string> env_text = w.spec.enabled ? home.environment(environ) : std::vector<std::string>{};
  if (!w.spec.enabled)
    for (char** e = environ; e && *e; ++e) env_text.emplace_back(*e);
  const RuntimeRow* rt = find_runtime_row(w.device_runtime);
  if (!w.device_uuid.empty() && rt && rt->visible_env) {  // its slot's GPU alone, as its device 0 (WorkerWalls)
    const std::string visible = std::string(rt->visible_env) + "=";
    std::erase_if(env_text, [&](const std::string& e) {
      for (const std::string& name : {visible, std::string(kDeviceRuntimeEnv) + "=", std::string(kDeviceUuidEnv) + "=", std::string(kDeviceOrdinalEnv) + "="})
        if (e.rfind(name, 0) == 0) return true;
      return false;
    });
    env_text.push_back(visible + w.device_uuid);
    env_text.push_back(std::string(kDeviceRuntimeEnv) + "=" + w.device_runtime);
    env_text.push_back(std::string(kDeviceUuidEnv) + "=" + w.device_uuid);
    env_text.push_back(std::string(kDeviceOrdinalEnv) + "=" + std::to_string(w.device_ordinal));
  }
  return env_text;
}


// In the forked child: its own process group, memory limit and channels, the walls in order,
// then the worker binary. Never returns.
[[noreturn]] void exec_worker(const std::string& binary, const WorkerLimits& limits, const PreparedSandbox& walls, int sock, int output,
                              const std::string& host_pid, char* const* env) {
  setpgid(0, 0);  // a group of its own: signals to the group, and the group's killing, stay there
  if (limits.memory_bytes > 0) {
    const rlimit lim{static_cast<rlim_t>(limits.memory_bytes), static_cast<rlim_t>(limits.memory_bytes)};
    setrlimit(RLIMIT_DATA, &lim);
  }
  dup2(sock, STDIN_FILENO);
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  // Nothing else of the host's reaches the worker: no results stream, no stray pipe.
  close_range(3, ~0U, 0);
  const char* step = nullptr;
  int err = enter_sandbox_before_exec(walls, &step);
  if (err == 0) err = enter_pid_namespace_before_exec(walls, &step);
  if (err == 0) err = drop_to_user_before_exec(walls, &step);
  if (err == 0 && walls.landlock) err = install_landlock_before_exec(walls.landlock_read, walls.landlock_write, &step);
  if (err == 0 && walls.syscall_filter) err = install_syscall_filter_before_exec(&step);
  if (err != 0) {
    const char* what = strerror(err);
    (void)!write(STDERR_FILENO, "backendbench worker sandbox: ", 29);
    (void)!write(STDERR_FILENO, step, strlen(step));
    (void)!write(STDERR_FILENO, ": ", 2);
    (void)!write(STDERR_FILENO, what, strlen(what));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(126);
  }
  char* const argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("__worker"), const_cast<char*>(host_pid.c_str()), nullptr};
  execve(binary.c_str(), argv, env);
  _exit(127);
}


class IsolatedExecutor final : public Executor {
 public:
  IsolatedExecutor(std::string binary, WorkerLimits limits)
      : binary_(std::move(binary)), limits_(limits), output_(limits.output_cap) {
    signal(SIGPIPE, SIG_IGN);
  }
  ~IsolatedExecutor() override { stop(); }

  void recycle() override { stop(); }

  void abandon() override {
    if (pid_ <= 0) return;
    freeze(false);
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    close_protocol();
    unregister_group(pid_);
    cgroup_.kill_all_and_release();
    home_.remove();
    pid_ = -1;  // left unreaped: the host's exit hands it to init
    if (output_fd_ >= 0) close(output_fd_);
    output_fd_ = -1;
    if (status_fd_ >= 0) close(status_fd_);
    status_fd_ = -1;
  }

  void set_walls(WorkerWalls walls) override { walls_ = std::move(walls); }
  void allow_writing_next(const std::string& dir) override { writable_next_ = dir; }

  bool freeze(bool frozen) override {
    if (pid_ <= 0) return false;
    if (cgroup_.active()) return cgroup_.freeze(frozen);
    return kill(-pid_, frozen ? SIGSTOP : SIGCONT) == 0;
  }

  bool launch() override { return pid_ > 0 || start(walls_.python, walls_.python_file); }

  WorkerTasks tasks() override {
    if (pid_ <= 0) return {};
    if (cgroup_.active()) return cgroup_.tasks();
    return process_tree(pid_);  // no cgroup: the supervisor and what it started
  }

  std::optional<double> group_cpu_seconds() override {
    if (pid_ <= 0 || !cgroup_.active()) return std::nullopt;
    return cgroup_.cpu_seconds();
  }

  ExecOutcome execute(const nlohmann::json& request, double timeout_seconds, int fd) override {
    const auto t0 = std::chrono::steady_clock::now();
    ExecOutcome out = exchange(request, timeout_seconds, fd);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

 private:
  ExecOutcome exchange(const nlohmann::json& request, double timeout_seconds, int fd) {
    ExecOutcome out;
    output_.clear();
    if (pid_ <= 0 && !start(walls_.python || runs_python(request), walls_.python_file.empty() ? served_file(request) : walls_.python_file)) {
      out.status = ExecOutcome::Status::crashed;
      out.detail = fmt::format("could not start the worker {}: {}", binary_, start_error_.empty() ? std::strerror(errno) : start_error_);
      return out;
    }
    // Each request carries a nonce the reply must echo: a reply is the answer to this request.
    const uint64_t nonce = nonces_();
    nlohmann::json sent = request;
    sent["nonce"] = nonce;
    if (!send_line(sock_, sent.dump(), fd)) return died(out);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    std::optional<std::pair<std::string, UniqueFd>> line;
    while (!(line = reader_->next_line())) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        drain_output(0);
        kill_worker();
        out.status = ExecOutcome::Status::timed_out;
        out.detail = fmt::format("no result after {:.1f} s; the worker was killed", timeout_seconds);
        return with_output(out);
      }
      pollfd p[2] = {{sock_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
      const int rc = poll(p, output_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        // The worker may be gone while something it left behind holds the socket open.
        if (const auto status = reap(false)) return died(out, *status);
        continue;
      }
      if (output_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) read_output();
      if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const long n = reader_->read_some();
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return died(out);
    }
    drain_output(0);  // what was printed before the reply and is already in the pipe
    try {
      out.reply = nlohmann::json::parse(line->first);
      if (!out.reply.is_object() || out.reply.value("nonce", uint64_t{0}) != nonce)
        throw std::runtime_error("it does not answer the request sent (a reply forged inside the worker?)");
      out.reply.erase("nonce");
      out.fd = std::move(line->second);
    } catch (const std::exception& e) {
      kill_worker();
      out.status = ExecOutcome::Status::crashed;
      out.detail = fmt::format("the worker sent an unreadable reply ({})", e.what());
      out.reply = nlohmann::json();
    }
    return with_output(out);
  }

  // `python`: forked from the warm interpreter where it is running (python_zygote.hpp), from
  // `python_file`'s library interpreter where it has one; else, or where it cannot, started
  // cold (fork and exec).
  bool start(bool python, const std::string& python_file = "") {
    start_error_.clear();
    int sock[2], output[2];
    if (!open_channels(sock, output)) return false;
    auto close_all = [&] {
      const int saved = errno;
      for (int fd : {sock[0], sock[1], output[0], output[1]}) close(fd);
      errno = saved;
    };
    // Everything the child needs is made here: after fork it may not allocate.
    const std::string host_pid = std::to_string(getpid());
    PreparedSandbox walls;
    walls.host_pid = getpid();
    if (walls_.spec.enabled && !prepare_walls(walls)) {
      close_all();
      return false;
    }
    std::vector<std::string> env_text = worker_environment(walls_, home_);
    // Every symbol bound at load: nothing legitimate rewrites a GOT slot after the worker
    // captured its own (worker_integrity.hpp).
    std::vector<char*> env;
    for (auto& e : env_text)
      if (e.rfind("LD_BIND_NOW=", 0) != 0) env.push_back(e.data());
    static char bind_now[] = "LD_BIND_NOW=1";
    env.push_back(bind_now);
    if (python && PythonZygote::get().started()) {
      const auto t0 = std::chrono::steady_clock::now();
      auto forked = PythonZygote::get().spawn(spawn_request(walls, env, limits_.memory_bytes), sock[1], output[1], kInterpreterWait, python_file);
      trace_line({{"side", "start"}, {"what", "python_fork"}, {"ok", static_cast<bool>(forked)}, {"error", forked ? std::string() : forked.error().message},
                  {"s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
      if (forked) return adopt(static_cast<pid_t>(forked->pid), sock, output, forked->status_fd);
      // A worker the interpreter forked before it failed to answer would hold copies of these:
      // the worker started cold gets channels of its own.
      close_all();
      if (!open_channels(sock, output)) {
        cgroup_.kill_all_and_remove();
        home_.remove();
        return false;
      }
    }
    env.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close_all();
      cgroup_.kill_all_and_remove();
      home_.remove();
      return false;
    }
    if (pid == 0) exec_worker(binary_, limits_, walls, sock[1], output[1], host_pid, env.data());  // does not return
    return adopt(pid, sock, output);
  }

  // The walls of the next worker, made here (after fork the child may not allocate): its cgroup,
  // namespaces, hidden and read-only folders, user, syscall filter, Landlock view and HOME. False
  // (start_error_ set) where its HOME could not be made.
  bool prepare_walls(PreparedSandbox& walls) {
    const auto& support = sandbox_support();
    if (cgroup_.create()) walls.cgroup_procs = cgroup_.procs_file().c_str();
    walls.namespaces = support.namespaces;
    for (const auto& d : walls_.spec.hidden_dirs) walls.hidden_dirs.push_back(d.c_str());
    for (const auto& f : walls_.spec.hidden_files) walls.hidden_files.push_back(f.c_str());
    for (const auto& d : walls_.spec.readonly_dirs) walls.readonly_dirs.push_back(d.c_str());
    if (walls_.own_user) {
      walls.uid = next_worker_uid();
      walls.groups = device_groups();
    }
    walls.drop_capabilities = walls_.drop_capabilities;
    prepare_syscall_filter();
    walls.syscall_filter = syscall_filter_supported();
    walls.landlock = landlock_supported();
    // Its user, real for what it runs: a private HOME, and a passwd entry where it has a view
    // of its own (worker_home.hpp).
    auto home = WorkerHome::make(walls.uid, walls.namespaces);
    if (!home) {
      cgroup_.kill_all_and_remove();
      start_error_ = home.error().message;
      return false;
    }
    home_ = std::move(*home);
    if (!home_.passwd_file().empty()) {
      walls.passwd_file = home_.passwd_file().c_str();
      walls.group_file = home_.group_file().c_str();
    }
    if (!home_.mount_options().empty()) {
      walls.home_dir = home_.home().c_str();
      walls.home_options = home_.mount_options().c_str();
      home_tmp_ = home_.tmp();
      walls.home_tmp = home_tmp_.c_str();
    }
    // It reads the system's and the run's trees, and writes its HOME, /dev and /proc alone
    // (CUDA's driver names its threads through /proc/self/task/<tid>/comm and fails to start
    // where it cannot; what else there is writable is its own, its user's and PID namespace's).
    for (const auto& d : walls_.spec.landlock_read) walls.landlock_read.push_back(d.c_str());
    walls.landlock_write = {home_.home().c_str(), "/dev", "/proc"};
    for (const auto& d : landlock_extra_dirs(true)) walls.landlock_write.push_back(d.c_str());
    writable_now_ = std::exchange(writable_next_, {});
    if (!writable_now_.empty()) walls.landlock_write.push_back(writable_now_.c_str());
    return true;
  }

  // The worker's process started (forked here, or by the warm interpreter as this process's
  // child, or by a kept interpreter's server, which says on `status_fd` how it ended): the host's
  // ends of its socket and its output pipe kept.
  bool adopt(pid_t pid, const int sock[2], const int output[2], int status_fd = -1) {
    status_fd_ = status_fd;
    setpgid(pid, pid);  // also here: whichever runs first (a child of this process's only)
    close(sock[1]);
    close(output[1]);
    fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK);
    pid_ = pid;
    register_group(pid_);
    sock_ = sock[0];
    reader_ = std::make_unique<LineReader>(sock_);
    output_fd_ = output[0];
    return true;
  }

  // Reads what the output pipe holds now; false at its end.
  bool read_output() {
    char chunk[65536];
    while (output_fd_ >= 0) {
      const ssize_t n = read(output_fd_, chunk, sizeof chunk);
      if (n > 0) {
        output_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return true;
      close(output_fd_);  // end of file, or an error
      output_fd_ = -1;
      return false;
    }
    return false;
  }

  // Reads the output pipe until it ends or `wait_ms` pass (a dead worker's last words).
  void drain_output(int wait_ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (output_fd_ >= 0 && read_output()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
      if (left <= 0) return;
      pollfd p{output_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) == 0) return;
    }
  }

  ExecOutcome with_output(ExecOutcome& out) {
    out.output_bytes = output_.total();
    if (out.output_bytes) out.output = output_.text();
    return std::move(out);
  }

  // `status`: the worker's, when already waited for.
  ExecOutcome died(ExecOutcome& out, std::optional<int> waited = std::nullopt) {
    int status = waited.value_or(0);
    close_protocol();
    drain_output(200);
    if (pid_ > 0 && !waited) status = reap(true).value_or(SIGKILL);
    reap_group();
    out.status = ExecOutcome::Status::crashed;
    out.detail = describe_status(status);
    ExecOutcome dead = with_output(out);
    if (WIFSIGNALED(status)) describe_crash(dead, WTERMSIG(status));
    return dead;
  }

  // Where the worker crashed, from its last words (crash_frames.hpp) when they name the signal
  // it died of: its frames in the run's own files (the root's plugins, this binary) placed by
  // function, file and line; the first of them in the detail.
  void describe_crash(ExecOutcome& out, int sig) {
    auto report = take_crash_report(out.output);
    const char* abbrev = sigabbrev_np(sig);
    if (!report || !abbrev || report->signal != std::string("SIG") + abbrev) return;
    std::set<std::string> own;
    // Only files of the run (beneath the root or this binary's folder, as the worker saw them),
    // none of the others' libraries: a plugin writes these lines as well as its handler does.
    for (const auto& f : report->frames) {
      if (f.module.empty() || own.count(f.module)) continue;
      std::error_code ec;
      const auto path = std::filesystem::path(f.module);
      const std::string real = std::filesystem::weakly_canonical(path, ec).string();  // no "../" out of the root
      if (!path.is_absolute() || ec || !std::filesystem::is_regular_file(real, ec)) continue;
      const bool hidden = std::find(walls_.spec.hidden_files.begin(), walls_.spec.hidden_files.end(), real) != walls_.spec.hidden_files.end();
      bool in_run = false;
      for (const auto& d : walls_.spec.readonly_dirs) in_run = in_run || real.rfind(d + "/", 0) == 0;
      if (in_run && !hidden) own.insert(f.module);
    }
    // A plugin that crashes at a new place every test costs each one an addr2line: a run's
    // first crashes are placed, the rest keep their modules and offsets.
    static std::atomic<int> placed{0};
    if (!own.empty() && placed++ < kCrashesPlaced) symbolise(*report, own);
    std::set<std::string> plugins;
    for (const auto& m : own)
      if (m != binary_) plugins.insert(m);
    if (const CrashFrame* f = report->first_in(plugins.empty() ? own : plugins))
      out.detail += report->sent ? fmt::format(" in {} (raised, not a fault)", f->where()) : fmt::format(" in {}, faulting address 0x{:x}", f->where(), report->address);
    out.crash = report->to_json();
  }

  void kill_worker() {
    if (pid_ > 0) {
      freeze(false);
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      reap(true);
    }
    close_protocol();
    reap_group();
  }

  // How the worker ended, once it has (its wait status), waiting for it with `block`: from
  // waitpid where it is this process's child, else from the pipe its parent (a kept
  // interpreter's server) writes the status to; a pipe closed without one reads as SIGKILL.
  std::optional<int> reap(bool block) {
    int status = 0;
    if (status_fd_ < 0) {
      if (pid_ > 0 && waitpid(pid_, &status, block ? 0 : WNOHANG) == pid_) return status;
      return std::nullopt;
    }
    pollfd p{status_fd_, POLLIN, 0};
    const bool ready = poll(&p, 1, block ? 10000 : 0) > 0;
    if (!ready && !block) return std::nullopt;
    const ssize_t n = ready ? read(status_fd_, &status, sizeof status) : 0;
    close(status_fd_);
    status_fd_ = -1;
    return n == static_cast<ssize_t>(sizeof status) ? status : SIGKILL;
  }

  void stop() {
    if (pid_ <= 0) return;
    freeze(false);
    close_protocol();  // the end of the socket: the worker leaves its loop
    for (int i = 0; i < 200; ++i) {  // up to 2 s, then force
      if (reap(false)) {
        reap_group();
        return;
      }
      usleep(10000);
    }
    freeze(false);
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    reap(true);
    reap_group();
  }

  // Whatever is left of the worker's process group (children a plugin left running) dies with it.
  void reap_group() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      unregister_group(pid_);
    }
    cgroup_.kill_all_and_remove();  // and whatever left the group (setsid, double fork)
    home_.remove();
    pid_ = -1;
    if (output_fd_ >= 0) close(output_fd_);
    output_fd_ = -1;
    if (status_fd_ >= 0) close(status_fd_);
    status_fd_ = -1;
  }

  void close_protocol() {
    reader_.reset();
    if (sock_ >= 0) close(sock_);
    sock_ = -1;
  }

  std::string binary_;
  WorkerLimits limits_;
  pid_t pid_ = -1;
  int sock_ = -1, output_fd_ = -1;
  int status_fd_ = -1;  // adopt(): where a kept interpreter's server says how the worker ended
  std::unique_ptr<LineReader> reader_;
  CapturedOutput output_;
  WorkerWalls walls_;
  WorkerCgroup cgroup_;
  WorkerHome home_;
  std::string home_tmp_;  // home_.tmp(), kept for the child of the next start
  std::string writable_next_, writable_now_;  // allow_writing_next(), for the next start; the current one's
  std::string start_error_;  // why the last start failed, where errno does not say it
  std::mt19937_64 nonces_{std::random_device{}()};
};

}  // namespace

std::size_t default_worker_memory_limit() { return physical_memory_bytes() / 2; }

bool is_worker_process(long pid) {
  if (pid <= 0) return false;
  const long group = getpgid(static_cast<pid_t>(pid));
  for (const auto& slot : g_worker_groups)
    if (const long g = slot.load(); g != 0 && (g == pid || g == group)) return true;
  // A process that left its worker's group (setsid) is still in the worker's cgroup. Read with
  // plain system calls: this runs in a signal handler.
  char path[64], mark[64], text[4096];
  snprintf(path, sizeof path, "/proc/%ld/cgroup", pid);
  snprintf(mark, sizeof mark, "/backendbench/%ld-", static_cast<long>(getpid()));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return strstr(text, mark) != nullptr;
}

void kill_all_workers() {
  for (const auto& slot : g_worker_groups)
    if (const long g = slot.load(); g > 0) kill(static_cast<pid_t>(-g), SIGKILL);
}

std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary, WorkerLimits limits) {
  return std::make_unique<IsolatedExecutor>(std::move(worker_binary), limits);
}

}  // namespace bb
