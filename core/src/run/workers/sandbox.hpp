// The walls around a worker process (Linux): what a plugin's process can reach.
//
//   - a cgroup of its own (the freezer's, v1 or v2): the host freezes every process the worker
//     started, however it detached (setsid, double fork), while the other side of a pair is
//     timed, and kills them all when the worker retires;
//   - namespaces: no network, its own IPC, its own PID namespace (no process outside it can be
//     named: not the host, not another worker, whatever user they run as), and its own mount
//     namespace in which the run's log directory is an empty tmpfs, every other plugin library of the run reads as an empty
//     file, and the run's folders (the custom-ops root, the binary's) are read-only;
//   - when the host runs as root: the worker runs as a user of its own (an unused uid, one per
//     worker), so it can neither signal, trace nor read the memory of the host or any other
//     worker, nor write the run's files; no_new_privs; and it is not dumpable;
//   - a filesystem view from an allow-list (landlock.hpp): it reads the system's trees and the
//     run's, and writes only its private HOME and /dev;
//   - a system call filter (syscall_filter.hpp), last before exec: no ptrace, process_vm_*,
//     mount, unshare, bpf, perf_event_open, io_uring, ... for it or anything it starts.
// Each wall is a row of kWalls (sandbox.cpp): what it keeps from a plugin and why it is off on
// this machine; what cannot apply here (not root, no cgroup to write, a wall turned off by
// BACKENDBENCH_SANDBOX_OFF) is said once by sandbox_support() and recorded with the run's
// results. Which worker gets which walls: worker_walls.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "expected.hpp"
#include "measure/cpu_pin.hpp"

namespace bb {

struct SandboxSupport {
  bool namespaces = false;  // mount, network, IPC and PID namespaces can be made
  bool drop_user = false;   // the host is root: each worker runs as a user of its own
  std::string freezer;      // the cgroup freezer's root ("" when none can be used)
  int freezer_version = 0;  // 1 (freezer.state) or 2 (cgroup.freeze)
  std::vector<std::string> off;  // each protection that is off, and why
};
// Probed once per process.
const SandboxSupport& sandbox_support();

// What one worker may not see.
struct SandboxSpec {
  bool enabled = false;
  std::vector<std::string> hidden_dirs;   // mounted over by an empty tmpfs (the log directory)
  std::vector<std::string> hidden_files;  // bound over by an empty file (other plugin libraries)
  std::vector<std::string> readonly_dirs;  // read-only in its view (the custom-ops root, the binary's folder)
  // Its filesystem view (landlock.hpp): what it may read and run from, besides the system's
  // trees; it writes only its HOME and /dev.
  std::vector<std::string> landlock_read;
};

// The cgroup of one worker: made before the worker starts, its processes frozen, thawed and
// killed as a whole, removed when the worker retires.
// Removes the empty cgroups that hosts no longer running left under the freezer's root (a run
// ends its workers without waiting for the kernel to tear them down: Executor::abandon).
void remove_stale_cgroups();

class WorkerCgroup {
 public:
  WorkerCgroup() = default;
  ~WorkerCgroup();
  WorkerCgroup(const WorkerCgroup&) = delete;
  WorkerCgroup& operator=(const WorkerCgroup&) = delete;
  // A fresh cgroup under the freezer's root; false where there is none.
  bool create();
  bool active() const { return !path_.empty(); }
  // The file a process writes "0" into to join (prepared before fork: no allocation after).
  const std::string& procs_file() const { return procs_; }
  bool freeze(bool frozen);
  // Its processes and their threads (cpu_pin.hpp).
  WorkerTasks tasks() const;
  // The CPU time every task that was ever in it has used (cgroup v2's cpu.stat); nullopt on v1.
  std::optional<double> cpu_seconds() const;
  // SIGKILL to every process in it, until it is empty (or a second has passed); then removes it.
  void kill_all_and_remove();
  // SIGKILL to every process in it, once, without waiting for them to die; removed if empty
  // already, else left to remove_stale_cgroups() of a later run. It is forgotten either way.
  void kill_all_and_release();

 private:
  std::string path_, procs_;
};

// In the forked child, before exec (async-signal-safe: every string prepared by the caller):
// joins the cgroup, enters new namespaces, hides what the spec hides. Returns 0, or the errno
// of the step that failed with `*step` naming it.
struct PreparedSandbox {
  bool namespaces = false;
  const char* cgroup_procs = nullptr;
  std::vector<const char*> hidden_dirs, hidden_files;
  std::vector<const char*> readonly_dirs;  // bound onto themselves read-only
  const char* passwd_file = nullptr;       // bound over /etc/passwd and /etc/group (worker_home.hpp)
  const char* group_file = nullptr;
  const char* home_dir = nullptr;          // a tmpfs of its own mounted there, with these options
  const char* home_options = nullptr;
  const char* home_tmp = nullptr;          // made in it, the worker's: its TMPDIR (worker_home.hpp)
  long uid = -1;                 // >= 0: become this user (and group)
  bool drop_capabilities = false;  // stay uid 0 but without any capability, for good (exec included)
  std::vector<unsigned> groups;  // supplementary groups kept (the GPU device nodes')
  long host_pid = 0;             // the host: the relay outside a PID namespace dies with it
  bool syscall_filter = false;   // install syscall_filter.hpp's filter last (prepared already)
  bool landlock = false;         // its filesystem view (landlock.hpp), after its user is set
  std::vector<const char*> landlock_read, landlock_write;
};
// Whether a user other than the owner can reach `path` (every folder above it searchable, the
// file itself readable): a worker running as a user of its own must read the binary, the root
// and the plugins.
bool others_can_reach(const std::string& path);
// A fresh unused user id for a worker (root hosts only).
long next_worker_uid();
// The groups that own GPU device nodes (/dev/nvidia*, /dev/kfd, /dev/dri/*): kept by workers.
std::vector<unsigned> device_groups();
int enter_sandbox_before_exec(const PreparedSandbox& s, const char** step);
// Then, where the namespaces were made: forks the first process of the worker's PID namespace,
// which mounts the namespace's /proc, holds kInitStatusFd (the init hands the worker's wait status
// to the relay there) and returns 0 to go on to exec; the calling process stays outside as the
// relay, waits for it and ends as the worker ended (it never returns). Returns errno on failure.
int enter_pid_namespace_before_exec(const PreparedSandbox& s, const char** step);
// The descriptor on which the init of a worker's PID namespace reports the worker's end.
inline constexpr int kInitStatusFd = 9;
// Then, the last step before exec: becomes s.uid, keeping s.groups; no_new_privs.
int drop_to_user_before_exec(const PreparedSandbox& s, const char** step);

// In the worker process itself, after exec: makes it undumpable (exec made it dumpable again).
void lock_down_worker();

}  // namespace bb
