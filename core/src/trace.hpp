// BACKENDBENCH_TRACE_BLOCKS=FILE: diagnosis lines, one JSON object per line appended to FILE: a
// request to a worker with its round trip and the worker's steps, a timed block, a step of the
// host's own work, and the session's milestones (plan, devices, each job and worker start). Each
// line carries "t", the seconds since the host process started, so the lines of one run make a
// timeline (where a run's wall time goes: docs/PERFORMANCE.md). Never read back, never judged.
#pragma once

#include <nlohmann/json.hpp>

namespace bb {

// Whether the variable names a file.
bool tracing();
// Appends `line` with "t" added; thread-safe; nothing when not tracing.
void trace_line(nlohmann::json line);

}  // namespace bb
