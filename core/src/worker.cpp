// The worker side of isolation: requests in, replies out, one line of JSON each.
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

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

int worker_main(long host_pid) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a killed host
  if (host_pid > 0 && getppid() != host_pid) return 1;  // the host died before prctl took hold
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
