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
  // What the worker printed (stdout and stderr) while serving the request: its head and tail
  // when longer than the cap (CapturedOutput), and how many bytes there were in all.
  std::string output;
  std::size_t output_bytes = 0;
};

// What a worker process may use. memory_bytes: its data segment (RLIMIT_DATA: heap and private
// writable mappings; 0: no limit). output_cap: bytes of a request's output kept (half from the
// start, half from the end).
struct WorkerLimits {
  std::size_t memory_bytes = 0;
  std::size_t output_cap = 16 * 1024;
};
// The default memory limit: half of this machine's physical memory.
std::size_t default_worker_memory_limit();

class Executor {
 public:
  virtual ~Executor() = default;
  virtual ExecOutcome execute(const nlohmann::json& request, double timeout_seconds) = 0;
  // Starts the next request in a fresh process (a new implementation begins); no-op in-process.
  virtual void recycle() {}
};

std::unique_ptr<Executor> make_in_process_executor();
// `worker_binary` is the host binary; it is run as `<binary> __worker <host pid>`, in a process
// group of its own, behind a supervisor process of its own (worker.cpp), under `limits`.
std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary, WorkerLimits limits = {});

// Whether `pid` belongs to a live worker (its supervisor, it, or what it started): the host
// tells their signals from a user's. Async-signal-safe.
bool is_worker_process(long pid);
// Kills every live worker's process group (an interrupted run abandons its tests in flight).
void kill_all_workers();

// Handles one request in this process: the worker loop and the in-process executor share it.
nlohmann::json handle_request(const nlohmann::json& request);

// The worker process's main loop: a JSON request per line on stdin, a JSON reply per line on
// the protocol stream. Plugin output to stdout is redirected to stderr so it cannot corrupt it.
// `host_pid` is the host's process id (0: unknown); the worker exits if its parent is another.
// The process first forks: the parent stays as the worker's supervisor (it only waits, and
// exits as the worker did), so a plugin that signals its parent hits the supervisor, never
// the host.
int worker_main(long host_pid);

}  // namespace bb
