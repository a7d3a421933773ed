// Python workers forked from one warm interpreter (issue 38): the run starts, once, a process
// that imports PyTorch and Triton (`backendbench __zygote`, worker/python_zygote_process.cpp),
// before any device context and before any implementation is known; each Python worker is then
// a fork of it, a few milliseconds instead of seconds of imports.
//
// The walls are today's, put up in the child before it imports anything of the implementation's:
// its cgroup, its namespaces (mount, network, IPC, PID), its HOME, its own user, no_new_privs.
// The child is made with CLONE_PARENT: it is the host's child as a worker started cold is (the
// host waits for it, signals its group, reads how it ended), never the interpreter's, and the
// interpreter runs no implementation code at all: what a worker does in its copy of the
// interpreter never reaches the next worker. (What can still reach the interpreter itself, and
// what the workers share that exec would have drawn afresh: docs/RELIABILITY.md.)
//
// Where the interpreter cannot be started (no PyTorch, another Python, threads running after its
// imports), Python workers start cold, as before, and say why there.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "expected.hpp"
#include "run/workers/sandbox.hpp"

namespace bb {

// What the warm interpreter needs to fork one worker: its walls, its environment and its memory
// limit (the protocol's request; its strings travel by value).
nlohmann::json spawn_request(const PreparedSandbox& walls, const std::vector<char*>& environment, std::size_t memory_bytes);

// The request read back in the interpreter: the walls' strings owned here, `walls` pointing into
// them (kept alive as long as the PreparedSandbox is used).
struct SpawnSpec {
  PreparedSandbox walls;
  std::vector<std::string> environment;
  std::size_t memory_bytes = 0;

 private:
  std::vector<std::string> strings_;
  friend Expected<std::unique_ptr<SpawnSpec>> spawn_spec_from_json(const nlohmann::json& j);
};
Expected<std::unique_ptr<SpawnSpec>> spawn_spec_from_json(const nlohmann::json& j);

class PythonZygote {
 public:
  // The process's one warm interpreter.
  static PythonZygote& get();

  // Starts it, once (later calls do nothing): `binary __zygote <pid>`, its imports under way
  // while the caller goes on. Call it from the thread that outlives every Python worker (the
  // session's): each worker forked from it is a child of that thread, and dies with it.
  void start(const std::string& binary, std::size_t memory_bytes);
  bool started() const;

  // Library interpreters for the implementations `files` (.py): the modules each file imports
  // from outside its own folder (a kernel library: Liger-Kernel's takes 14 s), read from its
  // text by a fork of the warm interpreter; for each set of them that some files name exactly,
  // a fork of the warm interpreter that imports that set once, then forks those files' workers.
  // A worker's process thus holds what its own file imports and nothing another file named (a
  // module with side effects at import, named by one implementation, never reaches another's
  // worker, the reference's or the baseline's). Waits up to `wait_seconds` for the warm
  // interpreter, never for the libraries' imports (nor does spawn). At most kMaxLibraries; a
  // file of none starts from the warm interpreter as before.
  void preload(const std::vector<std::string>& files, double wait_seconds);
  static constexpr std::size_t kMaxLibraries = 8;

  // A worker forked from it, with `protocol_fd` and `output_fd` (not taken) as its socket and its
  // stdout/stderr: its pid, a child of this process (of a kept interpreter's server where the run
  // uses one: then with the pipe that says how it ended); or why not (the caller starts it cold).
  // Waits up to `wait_seconds` for the interpreter's imports on the first call. With `file`
  // (the .py file the worker serves): from its library interpreter where it has one whose
  // imports are done (never waited for: a worker asked for earlier imports for itself, as does
  // every worker of one that failed).
  struct Forked {
    long pid = -1;
    // Where the worker is no child of this process (a kept interpreter's): the read end of a pipe
    // where its parent writes its wait status (an int) when it ends, and closes it; else -1.
    int status_fd = -1;
  };
  Expected<Forked> spawn(const nlohmann::json& request, int protocol_fd, int output_fd, double wait_seconds, const std::string& file = "");

  // For the run's phases: {"import_s", "forks", "fork_s_max", "fork_s_sum", "libraries": [{
  // "modules", "files", "import_s", "forks" | "error"}]} or {"error"}; null where it was never
  // started.
  nlohmann::json summary() const;

 private:
  PythonZygote() = default;
  bool wait_ready(double wait_seconds);
  // One library interpreter (preload); its own lock: a fork from one holds up no other.
  struct Library {
    std::mutex mutex;
    int sock = -1;
    long pid = -1;
    bool ready = false;
    std::string error;
    double import_s = 0;
    int forks = 0;
    std::vector<std::string> modules, files;
  };
  Expected<Forked> spawn_from_library(Library& lib, const nlohmann::json& request, int protocol_fd, int output_fd);
  // One request to fork a worker on `sock`: the worker's descriptors and, for a kept
  // interpreter, the write end of its status pipe beside it; null where no answer came.
  nlohmann::json ask_fork(int sock, const nlohmann::json& request, int protocol_fd, int output_fd, int* status_fd, bool* sent);
  // A worker forked, asked for at `asked` (its time, in the summary's figures); under mutex_.
  void count_fork(std::chrono::steady_clock::time_point asked);
  std::vector<std::unique_ptr<Library>> libraries_;  // grown under mutex_ only before any spawn reads it
  std::map<std::string, Library*> library_for_;      // by .py file

  // Kills it (and reaps it): from now on every Python worker starts cold, saying `why`. (A kept
  // one, serving other runs too, is only let go.)
  void give_up(std::string why);
  // A kept interpreter (python_kept_interpreter.hpp) connected to, or a new one started: true
  // where one answers on sock_.
  bool connect_kept();
  bool keeping_ = false;  // sock_ is a kept interpreter's server
  nlohmann::json kept_;  // {"runs", "age_s", "pid", "started"} once ready; "error": why the run has its own
  std::string binary_;
  std::vector<std::string> environment_;
  std::size_t memory_bytes_ = 0;

  std::atomic<bool> started_{false};  // read without the lock: a start never waits for another's fork
  mutable std::mutex mutex_;
  int sock_ = -1;
  long pid_ = -1;
  bool ready_ = false;
  std::string error_;
  double import_s_ = 0;
  int forks_ = 0;
  double fork_max_ = 0, fork_sum_ = 0;
};

// The interpreter's side (worker/python_zygote_process.cpp): `binary __zygote HOST_PID`;
// `role`, its argv's "__zygote", renamed "__worker" in each worker.
int python_zygote_main(long host_pid, char* role);
// A kept one (python_kept_interpreter.hpp): `binary __zygote keep SOCKET IDLE_SECONDS`.
int python_kept_main(const std::string& socket_path, double idle_seconds, char* role);

}  // namespace bb
