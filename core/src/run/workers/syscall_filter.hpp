// The system calls no worker may make (Linux seccomp): installed in the worker's first process
// before exec, after its user is set, so the supervisor, the worker, an interpreter forked for it
// and everything they start run under it, and no filter of theirs can undo it.
//
// What it refuses (EPERM) is what reaches outside a worker's own processes or raises what it may
// do, none of which a kernel, a PyTorch or a Triton call needs:
//   - other processes' memory and descriptors: ptrace, process_vm_readv/writev, pidfd_getfd;
//   - the filesystem's shape and the namespaces: mount and the new mount API, umount, pivot_root,
//     unshare, setns, and clone with a namespace flag (clone3, whose flags a filter cannot read,
//     answers ENOSYS: the C library then uses clone);
//   - the kernel's other doors: bpf, perf_event_open, userfaultfd, io_uring (whose operations no
//     filter sees), keyrings, modules, kexec, reboot, swap, acct, quotactl, handles to files by
//     number (open_by_handle_at), syslog, I/O ports;
//   - and any call by another ABI (i386 through int 0x80, x32), which would bypass the numbers
//     above: the process is killed.
// BACKENDBENCH_SANDBOX_OFF=seccomp turns it off (host.sandbox then says so).
#pragma once

#include <string>
#include <vector>

namespace bb {

// Whether this kernel and build can filter system calls, and the filter is not turned off.
bool syscall_filter_supported();
// The names of the refused calls, for the report and the docs.
const std::vector<std::string>& refused_syscalls();
// The filter, built once before any fork (no allocation after). Async-signal-safe: sets
// no_new_privs and loads the filter; 0, or the errno with `*step` naming the step. A no-op
// where unsupported.
void prepare_syscall_filter();
int install_syscall_filter_before_exec(const char** step);

}  // namespace bb
