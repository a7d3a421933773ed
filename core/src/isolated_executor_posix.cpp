// Tests in a worker process: fork + exec of the host binary as `__worker`, requests over a pipe,
// replies read with a deadline. A worker that dies is a crash (which signal, or which exit
// status), one that misses its deadline is killed (a timeout); either way the next request
// starts a fresh worker.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "executor.hpp"

namespace bb {

namespace {

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("killed by signal SIG{} ({}){}", abbrev ? abbrev : "?", strsignal(sig),
                       WCOREDUMP(status) ? ", core dumped" : "");
  }
  if (WIFEXITED(status)) return fmt::format("the worker exited with status {} in the middle of a test (exit() or a fatal error in the plugin)", WEXITSTATUS(status));
  return fmt::format("the worker stopped (status {})", status);
}

class IsolatedExecutor final : public Executor {
 public:
  explicit IsolatedExecutor(std::string binary) : binary_(std::move(binary)) { signal(SIGPIPE, SIG_IGN); }
  ~IsolatedExecutor() override { stop(); }

  void recycle() override { stop(); }

  ExecOutcome execute(const nlohmann::json& request, double timeout_seconds) override {
    ExecOutcome out;
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
        kill_worker();
        out.status = ExecOutcome::Status::timed_out;
        out.detail = fmt::format("no result after {:.1f} s; the worker was killed", timeout_seconds);
        return out;
      }
      pollfd p{from_child_, POLLIN, 0};
      const int rc = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) continue;
      char chunk[65536];
      const ssize_t n = read(from_child_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return died(out);
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    try {
      out.reply = nlohmann::json::parse(reply);
    } catch (const std::exception& e) {
      kill_worker();
      out.status = ExecOutcome::Status::crashed;
      out.detail = fmt::format("the worker sent an unreadable reply ({})", e.what());
    }
    return out;
  }

 private:
  bool start() {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return false;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return false;
    }
    const std::string host_pid = std::to_string(getpid());
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      execl(binary_.c_str(), binary_.c_str(), "__worker", host_pid.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    pid_ = pid;
    to_child_ = to_child[1];
    from_child_ = from_child[0];
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

  ExecOutcome& died(ExecOutcome& out) {
    int status = 0;
    close_pipes();
    if (pid_ > 0) waitpid(pid_, &status, 0);
    pid_ = -1;
    out.status = ExecOutcome::Status::crashed;
    out.detail = describe_status(status);
    return out;
  }

  void kill_worker() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    close_pipes();
  }

  void stop() {
    if (pid_ <= 0) return;
    close_pipes();  // EOF on stdin: the worker leaves its loop
    int status = 0;
    for (int i = 0; i < 200; ++i) {  // up to 2 s, then force
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      usleep(10000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  void close_pipes() {
    if (to_child_ >= 0) close(to_child_);
    if (from_child_ >= 0) close(from_child_);
    to_child_ = from_child_ = -1;
  }

  std::string binary_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary) {
  return std::make_unique<IsolatedExecutor>(std::move(worker_binary));
}

}  // namespace bb
