// The warm interpreter kept between runs (issue 38): a kernel engineer reruns one op dozens of
// times a day, and each run's warm interpreter (python_zygote.hpp) paid PyTorch's and Triton's
// imports again (4-6 s on the GPU machine, most of a Python run's wall). A run that starts a warm
// interpreter asks for a kept one instead: `backendbench __zygote keep SOCKET IDLE_SECONDS`, a
// process of its own session that imports once, then forks, for each run that connects, a
// server that serves that run as the run's own interpreter would (the scan, the library
// interpreters, the workers), and ends after IDLE_SECONDS without a run.
//
// One kept interpreter per binary (its path, inode, size and time), user, memory limit and
// environment (less the shell's own variables): a run of another build or another environment
// gets its own. Before serving a run it checks that what its imports rest on is as it was (every
// object loaded, the package folders): a package installed, upgraded or rebuilt since, and the
// run starts a new one.
//
// What no worker reaches (docs/RELIABILITY.md): the socket and the token a host must send live
// in <tmp>/backendbench-kept-<uid>, a folder of mode 0700 outside every worker's filesystem
// view (a worker run as its own user cannot enter it; one run as uid 0 without capabilities
// cannot read the token through its Landlock view), and the interpreter serves only a peer of
// its own user in its own mount and PID namespaces (a worker has namespaces of its own). Its
// workers are its server's children, not the host's: the host holds, for each, a pipe where the
// server writes the wait status when the worker ends.
//
// BACKENDBENCH_KEEP_WARM=SECONDS sets how long one waits idle (default 900); 0 keeps none: the
// run starts its own warm interpreter, as before.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "expected.hpp"

namespace bb {

// BACKENDBENCH_KEEP_WARM, in seconds (900 where unset or unreadable); 0: keep none.
double keep_warm_seconds();

// "" where a kept interpreter may serve this host's runs, else why not: one is kept only where
// its workers have a wall between them and it (their own user, their own namespaces, or a
// Landlock view that hides its token); elsewhere a worker could ask it for a worker without walls.
std::string kept_interpreter_refused();

struct KeptConnection {
  int sock = -1;  // SOCK_SEQPACKET, connected; the token already sent
  long pid = -1;  // the kept interpreter's process
  std::string socket_path;
  bool started = false;  // this run started it
};

// The folder of kept interpreters for this user, made where missing; or why it cannot be used
// (not a folder of this user's, or open to others).
Expected<std::string> kept_interpreter_dir();

// Connects to the kept interpreter for `binary`, this user, `memory_bytes` and `environment`
// (what a warm interpreter's process is started with), starting one (that waits `idle_seconds`
// idle) where none answers. Its first answer, read by the caller, says whether it is ready.
Expected<KeptConnection> connect_kept_interpreter(const std::string& binary, const std::vector<std::string>& environment, std::size_t memory_bytes,
                                                  double idle_seconds);

}  // namespace bb
