// Tests in a worker process: fork + exec of the host binary as `__worker`, requests over a pipe,
// replies read with a deadline. A worker that dies is a crash (which signal, or which exit
// status), one that misses its deadline is killed (a timeout); either way the next request
// starts a fresh worker.
//
// What a plugin can do to the host through its worker is bounded here: the worker runs in a
// process group of its own (killed whole, so children a plugin leaves behind go with it),
// under a memory limit, with its stdout and stderr captured into the test's result (capped),
// and behind a supervisor process (worker.cpp) that is the only parent a plugin can signal.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "executor.hpp"

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

class IsolatedExecutor final : public Executor {
 public:
  IsolatedExecutor(std::string binary, WorkerLimits limits)
      : binary_(std::move(binary)), limits_(limits), output_(limits.output_cap) {
    signal(SIGPIPE, SIG_IGN);
  }
  ~IsolatedExecutor() override { stop(); }

  void recycle() override { stop(); }

  ExecOutcome execute(const nlohmann::json& request, double timeout_seconds) override {
    ExecOutcome out;
    output_.clear();
    if (pid_ <= 0 && !start()) {
      out.status = ExecOutcome::Status::crashed;
      out.detail = fmt::format("could not start the worker {}: {}", binary_, std::strerror(errno));
      return out;
    }
    const std::string line = request.dump() + "\n";
    if (!write_all(line)) return died(out);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    std::string reply;
    while (true) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        reply = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        break;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        drain_output(0);
        kill_worker();
        out.status = ExecOutcome::Status::timed_out;
        out.detail = fmt::format("no result after {:.1f} s; the worker was killed", timeout_seconds);
        return with_output(out);
      }
      pollfd p[2] = {{from_child_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
      const int rc = poll(p, output_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        // The worker may be gone while something it left behind holds the pipe open.
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) return died(out, status);
        continue;
      }
      if (output_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) read_output();
      if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[65536];
      const ssize_t n = read(from_child_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return died(out);
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    drain_output(0);  // what was printed before the reply and is already in the pipe
    try {
      out.reply = nlohmann::json::parse(reply);
    } catch (const std::exception& e) {
      kill_worker();
      out.status = ExecOutcome::Status::crashed;
      out.detail = fmt::format("the worker sent an unreadable reply ({})", e.what());
    }
    return with_output(out);
  }

 private:
  bool start() {
    int to_child[2], from_child[2], output[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return false;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return false;
    }
    if (pipe2(output, O_CLOEXEC) != 0) {
      for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
      return false;
    }
    const std::string host_pid = std::to_string(getpid());
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      setpgid(0, 0);  // a group of its own: signals to the group, and the group's killing, stay there
      if (limits_.memory_bytes > 0) {
        const rlimit lim{static_cast<rlim_t>(limits_.memory_bytes), static_cast<rlim_t>(limits_.memory_bytes)};
        setrlimit(RLIMIT_DATA, &lim);
      }
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      dup2(output[1], STDERR_FILENO);
      execl(binary_.c_str(), binary_.c_str(), "__worker", host_pid.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);  // also here: whichever runs first
    close(to_child[0]);
    close(from_child[1]);
    close(output[1]);
    fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK);
    pid_ = pid;
    register_group(pid_);
    to_child_ = to_child[1];
    from_child_ = from_child[0];
    output_fd_ = output[0];
    buffer_.clear();
    return true;
  }

  bool write_all(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = write(to_child_, s.data() + off, s.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
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

  ExecOutcome& with_output(ExecOutcome& out) {
    out.output_bytes = output_.total();
    if (out.output_bytes) out.output = output_.text();
    return out;
  }

  // `status`: the worker's, when already waited for.
  ExecOutcome& died(ExecOutcome& out, std::optional<int> waited = std::nullopt) {
    int status = waited.value_or(0);
    close_protocol();
    drain_output(200);
    if (pid_ > 0 && !waited) waitpid(pid_, &status, 0);
    reap_group();
    out.status = ExecOutcome::Status::crashed;
    out.detail = describe_status(status);
    return with_output(out);
  }

  void kill_worker() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    close_protocol();
    reap_group();
  }

  void stop() {
    if (pid_ <= 0) return;
    close_protocol();  // EOF on stdin: the worker leaves its loop
    int status = 0;
    for (int i = 0; i < 200; ++i) {  // up to 2 s, then force
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reap_group();
        return;
      }
      usleep(10000);
    }
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    reap_group();
  }

  // Whatever is left of the worker's process group (children a plugin left running) dies with it.
  void reap_group() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      unregister_group(pid_);
    }
    pid_ = -1;
    if (output_fd_ >= 0) close(output_fd_);
    output_fd_ = -1;
  }

  void close_protocol() {
    if (to_child_ >= 0) close(to_child_);
    if (from_child_ >= 0) close(from_child_);
    to_child_ = from_child_ = -1;
  }

  std::string binary_;
  WorkerLimits limits_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, output_fd_ = -1;
  std::string buffer_;
  CapturedOutput output_;
};

}  // namespace

std::size_t default_worker_memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2;
}

bool is_worker_process(long pid) {
  if (pid <= 0) return false;
  const long group = getpgid(static_cast<pid_t>(pid));
  for (const auto& slot : g_worker_groups)
    if (const long g = slot.load(); g != 0 && (g == pid || g == group)) return true;
  return false;
}

void kill_all_workers() {
  for (const auto& slot : g_worker_groups)
    if (const long g = slot.load(); g > 0) kill(static_cast<pid_t>(-g), SIGKILL);
}

std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary, WorkerLimits limits) {
  return std::make_unique<IsolatedExecutor>(std::move(worker_binary), limits);
}

}  // namespace bb
