#include "run/workers/syscall_filter.hpp"

#include "run/workers/sandbox_off.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <iterator>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

namespace bb {

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#else
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif

struct Refused {
  long nr;
  const char* name;
};

// Refused with EPERM. Each where this architecture has it.
const Refused kRefused[] = {
#define BB_REFUSE(call) {SYS_##call, #call},
    BB_REFUSE(ptrace) BB_REFUSE(process_vm_readv) BB_REFUSE(process_vm_writev)
#ifdef SYS_pidfd_getfd
    BB_REFUSE(pidfd_getfd)
#endif
    BB_REFUSE(mount) BB_REFUSE(umount2) BB_REFUSE(pivot_root) BB_REFUSE(unshare) BB_REFUSE(setns)
#ifdef SYS_open_tree
    BB_REFUSE(open_tree) BB_REFUSE(move_mount) BB_REFUSE(fsopen) BB_REFUSE(fsconfig) BB_REFUSE(fsmount) BB_REFUSE(fspick)
#endif
#ifdef SYS_mount_setattr
    BB_REFUSE(mount_setattr)
#endif
    BB_REFUSE(bpf) BB_REFUSE(perf_event_open) BB_REFUSE(userfaultfd)
#ifdef SYS_io_uring_setup
    BB_REFUSE(io_uring_setup) BB_REFUSE(io_uring_enter) BB_REFUSE(io_uring_register)
#endif
    BB_REFUSE(keyctl) BB_REFUSE(add_key) BB_REFUSE(request_key)
    BB_REFUSE(init_module) BB_REFUSE(finit_module) BB_REFUSE(delete_module) BB_REFUSE(kexec_load)
#ifdef SYS_kexec_file_load
    BB_REFUSE(kexec_file_load)
#endif
    BB_REFUSE(reboot) BB_REFUSE(swapon) BB_REFUSE(swapoff) BB_REFUSE(acct) BB_REFUSE(quotactl)
    BB_REFUSE(open_by_handle_at) BB_REFUSE(name_to_handle_at) BB_REFUSE(syslog) BB_REFUSE(vhangup)
#if defined(__x86_64__)
    BB_REFUSE(iopl) BB_REFUSE(ioperm)
#endif
#undef BB_REFUSE
};

constexpr unsigned long kNamespaceFlags =
    CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

// The program: room for the arch check, each refused call (two instructions), clone, clone3.
constexpr std::size_t kMaxProgram = 8 + 2 * std::size(kRefused) + 8;
sock_filter g_program[kMaxProgram];
sock_fprog g_fprog{0, g_program};
bool g_prepared = false;

}  // namespace

bool syscall_filter_supported() {
  static const bool supported = !sandbox_part_off("seccomp") && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  return supported;
}

const std::vector<std::string>& refused_syscalls() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& r : kRefused) n.emplace_back(r.name);
    n.emplace_back("clone with a namespace flag");
    n.emplace_back("clone3 (ENOSYS)");
    return n;
  }();
  return names;
}

static void build_program() {
  std::size_t n = 0;
  auto put = [&](sock_filter f) { g_program[n++] = f; };
  const unsigned errno_eperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  put(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  put(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  put(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  put(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  put(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 ABI's numbers
  put(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (const auto& r : kRefused) {
    put(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(r.nr), 0, 1));
    put(BPF_STMT(BPF_RET | BPF_K, errno_eperm));
  }
  put(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(SYS_clone3), 0, 1));
  put(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
  put(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(SYS_clone), 0, 3));
  // clone's flags: its first argument (its low 32 bits, where every namespace flag is).
  put(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  put(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, static_cast<unsigned>(kNamespaceFlags), 0, 1));
  put(BPF_STMT(BPF_RET | BPF_K, errno_eperm));
  put(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  g_fprog.len = static_cast<unsigned short>(n);
  g_prepared = true;
}

void prepare_syscall_filter() {
  static const bool built = syscall_filter_supported() && (build_program(), true);
  (void)built;
}

int install_syscall_filter_before_exec(const char** step) {
  if (!g_prepared) return 0;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "no_new_privs for the system call filter";
    return errno;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &g_fprog, 0, 0) != 0) {
    *step = "the system call filter (seccomp)";
    return errno;
  }
  return 0;
}

#else

bool syscall_filter_supported() { return false; }
const std::vector<std::string>& refused_syscalls() {
  static const std::vector<std::string> none;
  return none;
}
void prepare_syscall_filter() {}
int install_syscall_filter_before_exec(const char**) { return 0; }

#endif

}  // namespace bb
