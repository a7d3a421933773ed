// One test, (implementation, case), driven from the host, as nvbench's measure_cold reads:
// inputs, prepare, reference, call, check, determinism, measure, audit. Three worker processes
// take part and none sees another's memory: the implementation's, the reference's (expected
// outputs) and the baseline's (timed against it in alternating blocks, the side not running
// frozen). The host makes the inputs, keeps the expected outputs, times every block on its own
// clock and judges every call; the implementation's worker only calls and sends its buffers
// back (docs/RELIABILITY.md).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "results.hpp"
#include "run/judge_request.hpp"

namespace bb {

TestResult run_test(const TestRequest& req, const TestWorkers& workers, const DriverLimits& limits);

// Every role in this process (unit tests, --no-isolate): none of the walls apply.
TestResult run_test_in_process(const TestRequest& req);

}  // namespace bb
