// Which pass of an op a test calls and times, tritonbench's names: `fwd` (the forward,
// <op>_kernel_impl), `bwd` (the backward alone, <op>_backward_impl, on the forward's inputs and
// the gradients of its outputs: backward_case.hpp), `fwd_bwd` (the forward, then the backward on
// the same inputs, one call timed whole: pair_case). A test's mode is part of its identity: its
// case id ("bwd:correctness/small[...]") and its result's "mode".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expected.hpp"

namespace bb {

enum class Mode { fwd, bwd, fwd_bwd };

// One row per mode: the open set, read by name, by the CLI and the manifest.
struct ModeRow {
  Mode mode;
  const char* name;         // "fwd"
  const char* id_prefix;    // what a case id of this mode starts with: "" or "bwd:"
  const char* description;  // for --help and errors
};
extern const ModeRow kModes[3];

const char* mode_name(Mode m);
// Whether a test of `mode` calls a backward (an implementation without one has it SKIPPED).
inline bool needs_backward(Mode m) { return m != Mode::fwd; }
std::optional<Mode> mode_named(std::string_view name);
// "fwd", "bwd", "fwd,bwd": the modes in the order given, each once; an error names the word and
// the modes there are.
Expected<std::vector<Mode>> parse_modes(std::string_view text);
// A case id of `mode` made from its forward case's id, and the forward's id from any case id.
std::string mode_case_id(Mode mode, const std::string& forward_id);
std::string forward_case_id(const std::string& id);

}  // namespace bb
