// A crashing worker's last words: the signal, the faulting address and the frames of the stack
// that crashed, each as the loaded module it lies in and its offset there, written to the
// worker's output (which the host captures per request) from the signal handler itself. The
// host turns them into function, file and line (crash_report.hpp). The worker then dies of the
// signal as it would have: the verdict is the host's, from how the process ended; these lines
// only say where, and a plugin that writes such lines itself fools no verdict.
//
//   backendbench-crash SIGSEGV addr=0x0
//   backendbench-frame 0x7f2a1c401139 0x1139 /path/to/libscale_segfault.so
#pragma once

namespace bb {

// The handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, on an alternate stack (a stack
// overflow is a SIGSEGV too), the unwinder loaded beforehand (nothing is loaded in a handler),
// and the loaded modules noted.
void install_crash_frames();
// The loaded modules' address ranges noted again: after a library is loaded.
void note_loaded_modules();

}  // namespace bb
