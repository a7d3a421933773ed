// Options for the unit tests of the sweep's machinery, which count cases: without value
// variants (cases.hpp); those are cases_test's and value_variants_test's.
#pragma once

#include "plan/plan.hpp"
#include "run/session.hpp"

inline bb::SessionOptions no_variants() {
  bb::SessionOptions o;
  o.expansion = {};
  return o;
}
inline bb::PlanOptions no_variant_plan() {
  bb::PlanOptions o;
  o.expansion = {};
  return o;
}
