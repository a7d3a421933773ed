// Deterministic input generation: the same seed gives the same bytes on every run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "expected.hpp"
#include "plan/cases.hpp"

namespace bb {

// Counter-based generator: element i depends only on (seed, i), never on what came before, so
// generation order (and a parallel fill, or one on a device) cannot change the values. The code
// is backendbench/detail/init_values.h's, shared with the device runtimes: the same bits there.
uint64_t random_bits(uint64_t seed, uint64_t counter);
double random_uniform01(uint64_t seed, uint64_t counter);  // [0, 1), 53 bits
double random_normal(uint64_t seed, uint64_t counter);     // N(0, 1), Box-Muller

// The device runtimes' code for an initialiser (bb_fill_spec::kind); nullopt for npy, whose
// values come from its file.
std::optional<uint32_t> device_init_kind(InitKind k);
// Whether an initialiser's values change with the seed (randn, uniform, randint; not constants,
// arange or a file).
bool varies_with_seed(InitKind k);

// Element i of a tensor initialised as `s` from `seed` (every initialiser but npy, whose values
// come from its file: nullopt). fill_tensor writes exactly these.
std::optional<double> init_value(const InitSpec& s, uint64_t seed, std::size_t i);

// Fills `data` (t.nbytes() bytes) as t.init says. `seed` is the tensor's own seed; `dir` is the
// folder .npy paths are relative to.
Status fill_tensor(const ConcreteTensor& t, void* data, uint64_t seed, const std::filesystem::path& dir);

}  // namespace bb
