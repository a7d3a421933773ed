// Where a worker's requests run: in a worker process (the default) or in the host
// (--no-isolate). Both take a request (the worker protocol's JSON, worker_protocol.hpp) and,
// where tensors travel, a sealed memfd beside it; they return the reply, or why none came.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/cpu_pin.hpp"
#include "protocol/sealed_blob.hpp"
#include "run/workers/sandbox.hpp"

namespace bb {

struct ExecOutcome {
  enum class Status { ok, crashed, timed_out };
  Status status = Status::ok;
  nlohmann::json reply;  // when ok
  UniqueFd fd;           // when ok: the sealed memfd that came with the reply, if any
  std::string detail;    // when crashed / timed out: which signal, exit status, how long
  // What the worker printed (stdout and stderr) while serving the request: its head and tail
  // when longer than the cap (CapturedOutput), and how many bytes there were in all.
  std::string output;
  std::size_t output_bytes = 0;
  double seconds = 0;  // the request's round trip on the host's own clock
  // When crashed by a signal: where, as the worker's last words said (crash_report.hpp); null else.
  nlohmann::json crash;
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

// The walls of the next worker an executor starts (sandbox.hpp): what it may not see, and
// whether it runs as a user of its own (or as uid 0 without capabilities).
struct WorkerWalls {
  SandboxSpec spec;
  bool own_user = false;
  bool drop_capabilities = false;
  bool python = false;  // it serves a .py file: forked from the warm interpreter (python_zygote.hpp)
  std::string python_file;  // that file: forked from the library interpreter of its imports, if any
  // A worker of one GPU's slot sees that GPU alone (its runtime's visible_env: its UUID;
  // device_runtimes.hpp), as its device 0; the worker maps the host's ordinal to it (its
  // requests name the host's). Empty: every device the host sees.
  std::string device_runtime;  // "cuda"
  std::string device_uuid;
  int device_ordinal = -1;
};
// How the worker learns it (its environment): the runtime, the device's UUID and the host's
// ordinal for it.
inline constexpr const char* kDeviceRuntimeEnv = "BACKENDBENCH_DEVICE_RUNTIME";
inline constexpr const char* kDeviceUuidEnv = "BACKENDBENCH_DEVICE_UUID";
inline constexpr const char* kDeviceOrdinalEnv = "BACKENDBENCH_DEVICE_ORDINAL";

class Executor {
 public:
  virtual ~Executor() = default;
  // `fd` (not taken): a sealed memfd sent with the request, or -1.
  virtual ExecOutcome execute(const nlohmann::json& request, double timeout_seconds, int fd = -1) = 0;
  // Starts the next request in a fresh process (a new implementation begins); no-op in-process.
  virtual void recycle() {}
  // Ends the worker without waiting for it: its processes killed, its socket closed; the
  // kernel finishes their teardown (a device context's: about 0.1 s each, one after another on
  // an H100) after the caller has moved on. For a run's last moments, when nothing is left to
  // ask of it. In-process: recycle().
  virtual void abandon() { recycle(); }
  // The walls of the worker started next (after recycle()).
  virtual void set_walls(WorkerWalls) {}
  // The worker started next (only that one) may also write beneath `dir` (its filesystem view,
  // landlock.hpp, lets a worker write its own HOME alone): a folder the host gave it for output.
  virtual void allow_writing_next(const std::string& /*dir*/) {}
  // Stops every process of the worker (and resumes them): the side of a pair that is not being
  // timed runs nothing. False where it could not be done (in-process; no worker running).
  virtual bool freeze(bool /*frozen*/) { return false; }
  // Starts the worker now, from the calling thread, if none is running (else the first request
  // does). A worker dies with the thread that started it (PR_SET_PDEATHSIG follows the thread,
  // not the process): start it from a thread that outlives its use. (A Python worker forked from
  // the warm interpreter dies with the thread that started the interpreter: python_zygote.hpp.)
  // False if it could not be started, or in-process.
  virtual bool launch() { return false; }
  // The worker's processes and threads (cpu_pin.hpp); none in-process or with no worker running.
  virtual WorkerTasks tasks() { return {}; }
  // The CPU time of every task the worker ever ran, ended ones included (its cgroup v2's count);
  // nullopt where nothing counts them (no cgroup, cgroup v1, in-process).
  virtual std::optional<double> group_cpu_seconds() { return std::nullopt; }
};

std::unique_ptr<Executor> make_in_process_executor();
// `worker_binary` is the host binary; it is run as `<binary> __worker <host pid>`, in a process
// group of its own, behind a supervisor process of its own (worker/worker_process.cpp), under `limits`.
std::unique_ptr<Executor> make_isolated_executor(std::string worker_binary, WorkerLimits limits = {});

// Whether `pid` belongs to a live worker (its supervisor, it, or what it started, however
// detached: its cgroup says so): the host tells their signals from a user's.
bool is_worker_process(long pid);
// Kills every live worker's process group (an interrupted run abandons its tests in flight).
void kill_all_workers();

struct Message;
// Handles one request in this process: the worker loop and the in-process executor share it.
Message handle_request(const nlohmann::json& request, UniqueFd fd);

// The worker process's main loop: a JSON request per line on the protocol socket (fd 0 at
// start), a JSON reply per line on the same socket, memfds passed beside them. Plugin output to
// stdout is redirected to stderr so it cannot reach the socket. `host_pid` is the host's
// process id (0: unknown); the worker exits if its parent is another. The process first forks:
// the parent stays as the worker's supervisor (it only waits, and exits as the worker did), so
// a plugin that signals its parent hits the supervisor, never the host.
int worker_main(long host_pid);

}  // namespace bb
