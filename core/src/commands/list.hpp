// The listing of a planned sweep: each op's reference, baseline, implementations and cases, and
// which cases each implementation will skip by what it declares. `backendbench --list` and
// `backendbench check --list` print it (from plan_sweep: what a run would test).
#pragma once

#include "plan/plan.hpp"

namespace bb {

// Prints the listing on stdout; returns 2 when an op or a library could not be used, else 0.
int print_listing(const SweepPlan& plan);

}  // namespace bb
