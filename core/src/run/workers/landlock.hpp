// A worker's filesystem view from an allow-list (Linux Landlock): what it may read, run and
// write, whatever its user may. The walls of sandbox.hpp hide the run's own files (the log
// directory, the other libraries) and keep the run's folders read-only, but a worker could still
// read a copy of the reference elsewhere on the filesystem (a build tree, a download), and one run
// as uid 0 without capabilities could write root's files outside the run. Under Landlock a worker
// reads only the system's trees (/usr, /lib*, /bin, /sbin, /etc, /opt, /proc, /sys, /dev, /run)
// and the run's (the custom-ops root, the binary's folder, the Python packages it imports, the
// folders of LD_LIBRARY_PATH and PYTHONPATH), and writes only its private HOME (its TMPDIR is
// in it), /dev (the GPU's device nodes, /dev/shm) and /proc (its threads' names: CUDA's driver
// does not start without). Installed in the worker's first process
// after its user is set, before the system call filter; it holds for everything the worker
// starts. BACKENDBENCH_SANDBOX_OFF=landlock turns it off (host.sandbox then says so);
// BACKENDBENCH_WORKER_READ and BACKENDBENCH_WORKER_WRITE (folders, colon-separated) widen it where a
// machine's drivers or tools live elsewhere.
#pragma once

#include <string>
#include <vector>

namespace bb {

// The kernel's Landlock ABI version (0: none, or turned off).
int landlock_abi();
bool landlock_supported();

// The trees every worker may read and run from (those that exist).
const std::vector<std::string>& landlock_system_dirs();
// The folders BACKENDBENCH_WORKER_READ (or, `write`, BACKENDBENCH_WORKER_WRITE) names, made absolute.
const std::vector<std::string>& landlock_extra_dirs(bool write);

// Async-signal-safe, in the child before exec: restricts the process to reading (and running)
// beneath `read` and reading and writing beneath `write` (paths that do not exist are left out).
// Sets no_new_privs. 0, or the errno with `*step` naming the step.
int install_landlock_before_exec(const std::vector<const char*>& read, const std::vector<const char*>& write, const char** step);

}  // namespace bb
