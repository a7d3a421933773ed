// One test's case on the wire: the host expands the manifest once (plan.hpp) and sends the
// worker the case itself with its prepare request, every field of it; the worker reads no
// manifest. JSON has no inf or NaN: a non-finite number is written {"nonfinite": "inf"} (a
// manifest may ask for `full: {value: inf}`, or an attribute of nan), and read back bit for bit.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/cases.hpp"

namespace bb {

nlohmann::json to_json(const ConcreteCase& c);
// Throws nlohmann::json::exception where a field is missing or of another type (the dispatch
// answers that request with an error naming it: worker_dispatch.hpp).
ConcreteCase case_from_json(const nlohmann::json& j);

}  // namespace bb
