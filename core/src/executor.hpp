// Where a test runs: in a worker process (the default) or in the host (--no-isolate).
// Both take a request (the worker protocol's JSON) and return the reply, or why none came.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace bb {

struct ExecOutcome {
  enum class Status { ok, crashed, timed_out };
  Status status = Status::ok;
  nlohmann::json reply;  // when ok
  std::string detail;    // when crashed / timed out: which signal, exit status, how long
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual ExecOutcome execute(const nlohmann::json& request, double timeout_seconds) = 0;
  // Starts the next request in a fresh process (a new implementation begins); no-op in-process.
  virtual void recycle() {}
};

std::unique_ptr<Executor> make_in_process_executor();
// `worker_binary` is the host binary; it is run as `<binary> __worker <host pid>`.
std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary);

// Handles one request in this process: the worker loop and the in-process executor share it.
nlohmann::json handle_request(const nlohmann::json& request);

// The worker process's main loop: a JSON request per line on stdin, a JSON reply per line on
// the protocol stream. Plugin output to stdout is redirected to stderr so it cannot corrupt it.
// `host_pid` is the host's process id (0: unknown); the worker exits if its parent is another.
int worker_main(long host_pid);

}  // namespace bb
