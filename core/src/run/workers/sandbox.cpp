#include "run/workers/sandbox.hpp"
#include "run/workers/landlock.hpp"
#include "run/workers/sandbox_off.hpp"
#include "run/workers/syscall_filter.hpp"
#include "worker/code_seal.hpp"

#include <cstdlib>
#include <filesystem>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

namespace bb {

namespace {
// mount_setattr(2) (Linux 5.12), called by number: glibc 2.36's headers do not all declare it.
struct MountAttr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
constexpr unsigned kAtRecursive = 0x8000;
constexpr uint64_t kMountReadOnly = 0x1;
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
int set_readonly(const char* path, bool readonly) {
  MountAttr a{readonly ? kMountReadOnly : 0, readonly ? 0 : kMountReadOnly, 0, 0};
  return static_cast<int>(syscall(SYS_mount_setattr, -1, path, kAtRecursive, &a, sizeof a));
}
}  // namespace


namespace {

// Parts turned off by name (sandbox_off.hpp): ns, net, ipc, pid, ro, user here.
bool turned_off(const char* part) { return sandbox_part_off(part); }
// CLONE_NEWPID takes effect for the caller's children: enter_pid_namespace_before_exec forks the
// namespace's first process (its init: the exec'd supervisor) and stays outside as its relay.
const bool kPidNamespace = !turned_off("pid");
const int kNamespaces = CLONE_NEWNS | (turned_off("net") ? 0 : CLONE_NEWNET) | (turned_off("ipc") ? 0 : CLONE_NEWIPC) |
                        (kPidNamespace ? CLONE_NEWPID : 0);
const bool kReadOnly = !turned_off("ro");

bool write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

// Whether a child can make the namespaces and a read-only view of the filesystem in them (it
// exits at once).
bool can_make_namespaces() {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (unshare(kNamespaces) != 0) _exit(1);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(1);
    if (mount("/tmp", "/tmp", nullptr, MS_BIND, nullptr) != 0) _exit(1);
    MountAttr a{kMountReadOnly, 0, 0, 0};
    if (syscall(SYS_mount_setattr, -1, "/tmp", kAtRecursive, &a, sizeof a) != 0) _exit(1);
    if (!kPidNamespace) _exit(0);
    const pid_t first = fork();  // the PID namespace's first process, with a /proc of its own
    if (first < 0) _exit(1);
    if (first == 0) _exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : 1);
    int st = 0;
    while (waitpid(first, &st, 0) < 0 && errno == EINTR) {
    }
    _exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A cgroup hierarchy whose freezer we can use: (root for our cgroups, version), or ("", 0).
std::pair<std::string, int> find_freezer() {
  struct Candidate {
    const char* mount;
    int version;
    const char* file;
  };
  for (const Candidate c : {Candidate{"/sys/fs/cgroup", 2, "cgroup.freeze"}, Candidate{"/sys/fs/cgroup/unified", 2, "cgroup.freeze"},
                            Candidate{"/sys/fs/cgroup/freezer", 1, "freezer.state"}}) {
    if (!exists(std::string(c.mount) + "/cgroup.procs")) continue;
    const std::string root = std::string(c.mount) + "/backendbench";
    if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) continue;
    const std::string probe = fmt::format("{}/probe-{}", root, getpid());
    if (mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) continue;
    const bool usable = exists(probe + "/" + c.file);
    rmdir(probe.c_str());
    if (usable) return {root, c.version};
  }
  return {"", 0};
}

// Whether this process holds capability `cap` in its effective set.
bool has_capability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[cap / 32].effective >> (cap % 32)) & 1u;
}

// What the walls' rows read: found once, before any row is asked.
struct WallFacts {
  bool root = false;  // what the walls need: namespaces and mounts, users, the securebits
  bool namespaces = false;
  std::string freezer;
};

// "" where BACKENDBENCH_SANDBOX_OFF does not name `part`, else that it does.
std::string named_off(const char* part) { return turned_off(part) ? fmt::format("BACKENDBENCH_SANDBOX_OFF={}", part) : ""; }

// The walls around a worker, one row each: what it keeps from a plugin (as the run's "off"
// line names it) and why it is off on this machine ("" where it is up). A new wall is a row
// here, the code that puts it up (enter_sandbox_before_exec and its neighbours, landlock.cpp,
// syscall_filter.cpp, ...), and who gets it: worker_walls.cpp.
struct WallRow {
  const char* what;
  std::string (*off)(const WallFacts&);
};
const WallRow kWalls[] = {
    {"namespaces (no network, no process outside its own, hidden log directory and libraries, a read-only filesystem)",
     [](const WallFacts& f) -> std::string {
       if (!f.root) return "not root (unprivileged user namespaces are not used yet)";
       if (turned_off("ns")) return named_off("ns");
       return f.namespaces ? "" : "unshare or mount_setattr refused";
     }},
    {"no network (a network namespace of its own)", [](const WallFacts& f) { return f.namespaces ? named_off("net") : std::string(); }},
    {"no System V IPC but its own (an IPC namespace of its own)", [](const WallFacts& f) { return f.namespaces ? named_off("ipc") : std::string(); }},
    {"no process outside its own (a PID namespace of its own)", [](const WallFacts& f) { return f.namespaces ? named_off("pid") : std::string(); }},
    {"the run's folders read-only in its view", [](const WallFacts& f) { return f.namespaces ? named_off("ro") : std::string(); }},
    {"a user per worker",
     [](const WallFacts& f) -> std::string {
       if (!f.root) return "not root, so workers run as the host's user (the host and the workers are made undumpable instead; a worker can still signal another)";
       return named_off("user");
     }},
    {"a cgroup per worker",
     [](const WallFacts& f) -> std::string {
       return f.freezer.empty() ? "no writable cgroup freezer; processes a plugin detaches from its process group are not frozen while the other "
                                  "side of a pair is timed, nor killed with the worker unless its PID namespace ends them"
                                : "";
     }},
    {"the filesystem view from an allow-list (reads outside the system's and the run's trees, writes outside its HOME)",
     [](const WallFacts&) -> std::string {
       if (landlock_supported()) return "";
       return turned_off("landlock") ? named_off("landlock") : "this kernel has no Landlock";
     }},
    {"the system call filter (ptrace, mount, bpf, ...)",
     [](const WallFacts&) -> std::string {
       if (syscall_filter_supported()) return "";
       return turned_off("seccomp") ? named_off("seccomp") : "this kernel or build has no seccomp";
     }},
    {"the worker's own code and RELRO sealed (mseal: no mprotect to patch them)",
     [](const WallFacts&) -> std::string {
       if (code_seal_supported()) return "";
       return turned_off("mseal") ? named_off("mseal") : "this kernel has no mseal (Linux 6.10)";
     }},
    {"a Python call's inputs held as poison while its stream is held (work on a stream of its own reads them)",
     [](const WallFacts&) { return named_off("witness"); }},
    {"fresh inputs for every timed sample of a CPU case, made by the host just before it (a content cache never hits)",
     [](const WallFacts&) { return named_off("fresh"); }},
};

SandboxSupport probe() {
  SandboxSupport s;
  WallFacts f;
  // "Root" here is what the walls need: making namespaces and mounts, changing users, locking
  // the securebits. uid 0 without those capabilities (a container, a test) counts as not root.
  f.root = geteuid() == 0 && has_capability(CAP_SYS_ADMIN) && has_capability(CAP_SETUID) && has_capability(CAP_SETGID) &&
           has_capability(CAP_SETPCAP);
  f.namespaces = f.root && !turned_off("ns") && can_make_namespaces();
  std::tie(f.freezer, s.freezer_version) = find_freezer();
  s.namespaces = f.namespaces;
  s.drop_user = f.root && !turned_off("user");
  s.freezer = f.freezer;
  for (const auto& wall : kWalls)
    if (std::string why = wall.off(f); !why.empty()) s.off.push_back(fmt::format("{}: {}", wall.what, why));
  return s;
}

std::atomic<unsigned> g_cgroup_counter{0};

}  // namespace

const SandboxSupport& sandbox_support() {
  static const SandboxSupport s = probe();
  return s;
}

WorkerCgroup::~WorkerCgroup() { kill_all_and_remove(); }

bool WorkerCgroup::create() {
  const auto& s = sandbox_support();
  if (s.freezer.empty()) return false;
  const std::string p = fmt::format("{}/{}-{}", s.freezer, getpid(), g_cgroup_counter++);
  if (mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return false;
  path_ = p;
  procs_ = p + "/cgroup.procs";
  return true;
}

bool WorkerCgroup::freeze(bool frozen) {
  if (path_.empty()) return false;
  const int version = sandbox_support().freezer_version;
  const bool ok = version == 2 ? write_file(path_ + "/cgroup.freeze", frozen ? "1" : "0")
                               : write_file(path_ + "/freezer.state", frozen ? "FROZEN" : "THAWED");
  if (!ok || !frozen) return ok;
  // Freezing takes effect asynchronously: wait until every task is frozen (a second at most).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < until) {
    const std::string state = version == 2 ? read_file(path_ + "/cgroup.events") : read_file(path_ + "/freezer.state");
    if (version == 2 ? state.find("frozen 1") != std::string::npos : state.rfind("FROZEN", 0) == 0) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

WorkerTasks WorkerCgroup::tasks() const {
  WorkerTasks t;
  if (path_.empty()) return t;
  std::istringstream procs(read_file(procs_));
  for (long pid; procs >> pid;) t.processes.push_back(pid);
  // v2 lists a cgroup's threads in cgroup.threads, v1 in tasks.
  std::istringstream threads(read_file(path_ + (sandbox_support().freezer_version == 2 ? "/cgroup.threads" : "/tasks")));
  for (long tid; threads >> tid;) t.threads.push_back(tid);
  return t;
}

std::optional<double> WorkerCgroup::cpu_seconds() const {
  if (path_.empty() || sandbox_support().freezer_version != 2) return std::nullopt;
  std::istringstream stat(read_file(path_ + "/cpu.stat"));
  std::string key;
  for (unsigned long long usec; stat >> key >> usec;)
    if (key == "usage_usec") return 1e-6 * static_cast<double>(usec);
  return std::nullopt;
}

void WorkerCgroup::kill_all_and_release() {
  if (path_.empty()) return;
  const bool kill_file = sandbox_support().freezer_version == 2 && exists(path_ + "/cgroup.kill");
  if (kill_file) {
    write_file(path_ + "/cgroup.kill", "1");  // every task, atomically: none forks its way out
  } else {
    freeze(true);  // no task forks while the list is read and killed
    std::istringstream procs(read_file(procs_));
    for (long pid; procs >> pid;) kill(static_cast<pid_t>(pid), SIGKILL);
    freeze(false);  // frozen tasks take SIGKILL only once thawed (cgroup v1)
  }
  rmdir(path_.c_str());  // fails while its processes are still dying: a later run removes it
  path_.clear();
  procs_.clear();
}

void remove_stale_cgroups() {
  const std::string& root = sandbox_support().freezer;
  if (root.empty()) return;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    const auto dash = name.find('-');
    if (dash == 0 || dash == std::string::npos || name.find_first_not_of("0123456789") != dash) continue;
    const long host = std::atol(name.substr(0, dash).c_str());
    if (host <= 0 || (kill(static_cast<pid_t>(host), 0) != 0 && errno == ESRCH)) rmdir(e.path().c_str());  // only an empty one goes
  }
}

void WorkerCgroup::kill_all_and_remove() {
  if (path_.empty()) return;
  const int version = sandbox_support().freezer_version;
  if (version == 2 && exists(path_ + "/cgroup.kill")) write_file(path_ + "/cgroup.kill", "1");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    std::istringstream procs(read_file(procs_));
    bool any = false;
    for (long pid; procs >> pid;) {
      any = true;
      kill(static_cast<pid_t>(pid), SIGKILL);
    }
    if (!any) break;
    freeze(false);  // frozen tasks take SIGKILL only once thawed (cgroup v1)
    if (std::chrono::steady_clock::now() > until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  rmdir(path_.c_str());
  path_.clear();
  procs_.clear();
}

int enter_sandbox_before_exec(const PreparedSandbox& s, const char** step) {
  if (s.cgroup_procs) {
    const int fd = open(s.cgroup_procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) {
      *step = "joining the worker's cgroup";
      return errno;
    }
    close(fd);
  }
  if (!s.namespaces) return 0;
  if (unshare(kNamespaces) != 0) {
    *step = "unshare";
    return errno;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    *step = "making mounts private";
    return errno;
  }
  for (const char* d : s.hidden_dirs)
    if (mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0555") != 0 && errno != ENOENT) {
      *step = "hiding the log directory";
      return errno;
    }
  for (const char* f : s.hidden_files)
    if (mount("/dev/null", f, nullptr, MS_BIND, nullptr) != 0 && errno != ENOENT) {
      *step = "hiding another library";
      return errno;
    }
  // The worker's user named in its view (worker_home.hpp).
  for (auto [file, over] : {std::pair{s.passwd_file, "/etc/passwd"}, std::pair{s.group_file, "/etc/group"}})
    if (file && mount(file, over, nullptr, MS_BIND, nullptr) != 0 && errno != ENOENT) {
      *step = "naming the worker's user (/etc/passwd, /etc/group)";
      return errno;
    }
  // Its HOME, private: a tmpfs of its own, gone with its mount namespace (it needs exec: Triton
  // loads the kernels it compiles into its cache there).
  if (s.home_dir && mount("tmpfs", s.home_dir, "tmpfs", MS_NOSUID | MS_NODEV, s.home_options) != 0) {
    *step = "mounting the worker's private HOME";
    return errno;
  }
  if (s.home_dir && s.home_tmp) {  // its TMPDIR, in its HOME, its own
    if (mkdir(s.home_tmp, 0700) != 0 && errno != EEXIST) {
      *step = "making the worker's TMPDIR";
      return errno;
    }
    if (s.uid >= 0 && chown(s.home_tmp, static_cast<uid_t>(s.uid), static_cast<gid_t>(s.uid)) != 0) {
      *step = "giving the worker its TMPDIR";
      return errno;
    }
  }
  // The run's folders read-only (the root's libraries, the binary and its build), whoever the
  // worker runs as: each bound onto itself, then its mount made read-only. (Not the whole
  // filesystem: the CUDA driver refuses to start on a read-only root.)
  for (const char* d : s.readonly_dirs) {
    if (!kReadOnly) break;
    if (mount(d, d, nullptr, MS_BIND | MS_REC, nullptr) != 0 && errno != ENOENT) {
      *step = "binding a folder to make it read-only";
      return errno;
    }
    if (set_readonly(d, true) != 0 && errno != ENOENT) {
      *step = "making a folder read-only";
      return errno;
    }
  }
  return 0;
}

namespace {
// The relay: the host's child outside the worker's PID namespace. It waits for the namespace's
// first process (the supervisor, its init) and ends as the worker ended, which the init hands
// over through `status_fd` (an init cannot end by a signal it sends itself). Only async-signal-
// safe calls: this is a forked copy of the host, which may have other threads.
[[noreturn]] void relay(pid_t first, int status_fd) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // none of the host's handlers
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) close(fd);  // the worker's alone
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  int relayed = 0;
  ssize_t n;
  while ((n = read(status_fd, &relayed, sizeof relayed)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof relayed)) status = relayed;  // else the init itself was killed
  if (WIFSIGNALED(status)) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    raise(WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
}  // namespace

int enter_pid_namespace_before_exec(const PreparedSandbox& s, const char** step) {
  if (!s.namespaces || !kPidNamespace) return 0;
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the relay never outlives the host, so the namespace neither
  if (s.host_pid > 0 && getppid() != s.host_pid) _exit(1);  // the host died before prctl took hold
  int status_pipe[2];
  if (pipe(status_pipe) != 0) {
    *step = "a pipe for the PID namespace's init";
    return errno;
  }
  const pid_t first = fork();
  if (first < 0) {
    *step = "forking into the PID namespace";
    return errno;
  }
  if (first > 0) {
    close(status_pipe[1]);
    relay(first, status_pipe[0]);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the relay
  close(status_pipe[0]);
  if (dup2(status_pipe[1], kInitStatusFd) != kInitStatusFd) {
    *step = "the init's status descriptor";
    return errno;
  }
  if (status_pipe[1] != kInitStatusFd) close(status_pipe[1]);
  // A /proc of the namespace: its processes as they number themselves (the CUDA driver reads
  // /proc/<its pid>), and no other process of the machine listed.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    *step = "mounting the PID namespace's /proc";
    return errno;
  }
  return 0;
}

int drop_to_user_before_exec(const PreparedSandbox& s, const char** step) {
  if (s.drop_capabilities) {
    // uid 0 without capabilities, and no way back: none regained by exec (NOROOT), none kept.
    for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                                     SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) != 0) {
      *step = "securebits";
      return errno;
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capset, &header, data) != 0) {
      *step = "capset";
      return errno;
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    return 0;
  }
  if (s.uid < 0) return 0;
  std::vector<gid_t> groups(s.groups.begin(), s.groups.end());
  if (setgroups(groups.size(), groups.data()) != 0) {
    *step = "setgroups";
    return errno;
  }
  const auto id = static_cast<uid_t>(s.uid);
  if (setresgid(id, id, id) != 0) {
    *step = "setresgid";
    return errno;
  }
  if (setresuid(id, id, id) != 0) {
    *step = "setresuid";
    return errno;
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  return 0;
}

bool others_can_reach(const std::string& path) {
  std::string p = path;
  struct stat st {};
  if (stat(p.c_str(), &st) != 0) return false;
  if (!(st.st_mode & (S_ISDIR(st.st_mode) ? S_IXOTH : S_IROTH))) return false;
  while (true) {
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos || slash == 0) break;
    p.resize(slash);
    if (stat(p.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return false;
  }
  return true;
}

long next_worker_uid() {
  static std::atomic<unsigned> n{0};
  // Far above any real account (Debian's are below 65536, systemd's dynamic ones below 2^31).
  return 0x60000000L + static_cast<long>(getpid() % 65536) * 1024 + static_cast<long>(n++ % 1024);
}

std::vector<unsigned> device_groups() {
  std::vector<unsigned> out;
  auto add = [&](const std::string& p) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_gid != 0)
      if (std::find(out.begin(), out.end(), st.st_gid) == out.end()) out.push_back(st.st_gid);
  };
  for (const char* p : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/kfd", "/dev/dri/renderD128", "/dev/dri/card0"}) add(p);
  return out;
}

void lock_down_worker() { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

}  // namespace bb
