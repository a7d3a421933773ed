// The worker side of isolation: requests in, replies out, one line of JSON each, over the
// protocol socket the host made (message_channel.hpp).
#include <cstdio>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <csignal>
#include <string>

#include "protocol/message_channel.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/sandbox.hpp"
#include "worker/crash_frames.hpp"
#include "worker/request_server.hpp"

namespace bb {

namespace {
RequestServer& runner() {
  static RequestServer r;
  return r;
}
}  // namespace

Message handle_request(const nlohmann::json& request, UniqueFd fd) {
  Message reply = runner().handle(request, std::move(fd));
  if (runner().poisoned() && reply.body.is_object()) reply.body["fatal"] = true;  // the host replaces this worker
  return reply;
}

namespace {
// Where the sandbox gave the worker a PID namespace (sandbox.hpp), the supervisor is that
// namespace's init: nothing inside can signal it (an init ignores what it has no handler for) and
// nothing outside can be named from inside. It reaps whatever the worker's children leave behind,
// and when the worker ends it hands the worker's wait status to the relay outside (it cannot end
// by the worker's signal: it would ignore its own) and exits, ending every process left inside.
[[noreturn]] void supervise_as_init(pid_t worker) {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) close(fd);
  for (;;) {
    int status = 0;
    const pid_t ended = waitpid(-1, &status, 0);
    if (ended == worker) {
      (void)!write(kInitStatusFd, &status, sizeof status);
      _exit(0);
    }
    if (ended < 0 && errno != EINTR) _exit(1);
  }
}

// The supervisor: the worker's parent, standing between it and the host. It waits for the
// worker and ends as the worker ended (the same signal, or the same exit status), so the host
// sees the worker's fate; a plugin that signals its parent reaches this process, whose death
// takes the worker with it (PR_SET_PDEATHSIG) and reads as a crash of that test.
[[noreturn]] void supervise(pid_t worker) {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) close(fd);  // the worker's alone
  int status = 0;
  while (waitpid(worker, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);  // the worker dumped core already, if it was going to
    signal(WTERMSIG(status), SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, WTERMSIG(status));
    sigprocmask(SIG_UNBLOCK, &all, nullptr);
    raise(WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
}  // namespace

int worker_main(long host_pid) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a killed host (or the relay)
  // The init of a PID namespace of its own: its parent, the relay, is outside (numbered 0 here).
  const bool init = getpid() == 1 && fcntl(kInitStatusFd, F_GETFD) >= 0;
  if (!init && host_pid > 0 && getppid() != host_pid) return 1;  // the host died before prctl took hold
  if (init) lock_down_worker();
  const pid_t supervisor = getpid();
  const pid_t worker = fork();
  if (worker < 0) return 1;
  if (worker > 0) init ? supervise_as_init(worker) : supervise(worker);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
  if (getppid() != supervisor) return 1;
  if (init) close(kInitStatusFd);
  lock_down_worker();  // exec made the process dumpable again
#else
  (void)host_pid;
#endif
  // The protocol socket moves off fd 0; fd 0 reads nothing, fd 1 goes where stderr goes, so
  // whatever a plugin prints reaches the host's capture, never the socket.
  const int sock = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 100);
  if (sock < 0) return 1;
  const int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, STDIN_FILENO), close(null);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  // A plugin's prints reach the pipe by the line (not when a full buffer happens to flush, a
  // test later, or never when it crashes), and all of a request's before its reply: the host
  // files them under the test that made them.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  install_crash_frames();  // a crash's signal and frames reach the host (crash_frames.hpp)

  runner().watch_integrity();
  LineReader reader(sock);
  while (true) {
    auto line = reader.next_line();
    if (!line) {
      const long n = reader.read_some();
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {  // the host closed the socket: the worker is done
        // Out at once: nothing is left to do but stdio's buffers, and what the runtimes would
        // tear down on the way out of main (a device context) the kernel takes back at exit
        // anyway. (On the H100 that teardown is the kernel's: 0.1 s a context either way.)
        std::fflush(nullptr);
        _exit(0);
      }
      continue;
    }
    if (line->first.empty()) continue;
    Message reply;
    nlohmann::json nonce;
    try {
      const auto request = nlohmann::json::parse(line->first);
      nonce = request.value("nonce", nlohmann::json());
      reply = handle_request(request, std::move(line->second));
    } catch (const std::exception& e) {
      reply.body = {{"error", std::string("worker: ") + e.what()}};
    }
    if (!reply.body.is_object()) reply.body = nlohmann::json::object();
    reply.body["nonce"] = nonce;
    std::fflush(nullptr);  // what this request printed goes before its reply
    if (!send_line(sock, reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), reply.fd.get())) return 0;
  }
}

}  // namespace bb
