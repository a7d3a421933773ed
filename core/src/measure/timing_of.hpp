// A measurement as a test's result keeps it (results.hpp's Timing): what the timer measured,
// named for the result files. What the host adds (the pairing's baseline time, where inputs were
// made, the CPU it was pinned to, its notes) the test driver writes after.
#pragma once

#include "measure/measurement.hpp"
#include "results.hpp"

namespace bb {

Timing timing_of(const Measurement& m);

}  // namespace bb
