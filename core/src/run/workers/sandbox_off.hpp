// BACKENDBENCH_SANDBOX_OFF=a,b,...: walls of a worker turned off by name, for diagnosis (the run
// says which are off): ns, net, ipc, pid, ro, user (sandbox.cpp), seccomp (syscall_filter.cpp),
// landlock (landlock.cpp), mseal (worker/code_seal.cpp), witness (a Python call's poisoned inputs: python_witness.cpp), fresh (fresh inputs for
// every timed CPU sample: fresh_inputs.hpp).
#pragma once

#include <string_view>

namespace bb {

// Whether `part` is named in BACKENDBENCH_SANDBOX_OFF.
bool sandbox_part_off(std::string_view part);

}  // namespace bb
