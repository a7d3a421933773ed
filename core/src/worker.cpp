// The worker side of isolation: requests in, replies out, one line of JSON each.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "device.hpp"
#include "executor.hpp"
#include "test_runner.hpp"

namespace bb {

namespace {
TestRunner& runner() {
  static TestRunner r;
  return r;
}
}  // namespace

nlohmann::json handle_request(const nlohmann::json& request) {
  const std::string cmd = request.value("cmd", "");
  if (cmd == "probe") return to_json(runner().probe(probe_request_from_json(request)));
  if (cmd == "test") {
    nlohmann::json j;
    to_json(j, runner().run(test_request_from_json(request)));
    if (runner().poisoned()) j["fatal"] = true;  // the host replaces this worker
    return j;
  }
  if (cmd == "devices") return describe_device_kind(request.value("kind", ""), request.value("measure_peak", false));
  return {{"error", "unknown command '" + cmd + "'"}};
}

namespace {
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
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a killed host
  if (host_pid > 0 && getppid() != host_pid) return 1;  // the host died before prctl took hold
  const pid_t supervisor = getpid();
  const pid_t worker = fork();
  if (worker < 0) return 1;
  if (worker > 0) supervise(worker);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
  if (getppid() != supervisor) return 1;
#else
  (void)host_pid;
#endif
  // The protocol gets its own copy of stdout; fd 1 becomes stderr for whatever plugins print.
  const int proto_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE* proto = fdopen(proto_fd, "w");
  if (!proto) return 1;

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::json reply;
    try {
      reply = handle_request(nlohmann::json::parse(line));
    } catch (const std::exception& e) {
      reply = {{"error", std::string("worker: ") + e.what()}};
    }
    const std::string out = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(out.data(), 1, out.size(), proto);
    std::fflush(proto);
  }
  return 0;
}

}  // namespace bb
