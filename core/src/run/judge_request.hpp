// What one test is (TestRequest), the workers it runs in (TestWorkers) and its limits
// (DriverLimits): the test driver's input (judge.hpp), read by its steps (judge/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "measure/measurement.hpp"
#include "plan/cases.hpp"
#include "protocol/worker_protocol.hpp"
#include "results.hpp"
#include "run/workers/executor.hpp"

namespace bb {

struct TestRequest {
  TestId id;  // the test's identity, made once by the host (job_runner.cpp): its result carries it
  std::string op;
  // The case, as the plan expanded it (plan.hpp): it travels as this one value to every worker
  // of the test (PrepareRequest::test_case); nothing reads the manifest again.
  ConcreteCase test_case;
  std::filesystem::path data_dir;  // where its .npy initialisers are: the manifest's folder
  Target impl;
  Target reference;
  std::string device = "cpu";            // where the implementation runs: cpu, cuda, hip
  int device_index = 0;
  std::string reference_device = "cpu";  // where the reference runs
  bool check = true;              // compare against the reference
  bool time = false;              // measure when correct (or when check is false)
  bool check_determinism = false; // a second call must give the same bytes
  TimingOptions timing;
  // With `time`: the baseline to time against, on the implementation's device, in alternating
  // blocks in its own worker (paired.hpp); the result then carries the paired speedup.
  std::optional<Target> baseline;
  // The implementation declares preconditions (info record or manifest) and this case meets
  // them: BB_ERR_UNSUPPORTED on it is an ERROR, not SKIPPED.
  bool declared_supported = false;
};

// The identity's fields that are the case's (op, case, variant, kind, work, shapes); the
// implementation, its device and the repeat are the caller's.
TestId case_identity(const std::string& op, const ConcreteCase& c);
// A test of case `c` of `op`, whose manifest is in `data_dir`: its identity case_identity's.
TestRequest case_request(const std::string& op, const ConcreteCase& c, std::filesystem::path data_dir);

// The workers of a test. `baseline` may be `reference` (the same trusted worker) or null.
struct TestWorkers {
  Executor* impl = nullptr;
  Executor* reference = nullptr;
  Executor* baseline = nullptr;
  // A worker that holds no plugin, which compares a device test's timed blocks on the device
  // (device_check.hpp); null: every block's buffers come back to the host.
  Executor* checker = nullptr;
  // Called before the first timed block: work started ahead for later tests (the next
  // implementation's worker: spare_worker.hpp) finishes first, so none of it runs beside a
  // measurement. Null: nothing to wait for.
  std::function<void()> quiet;
};

struct DriverLimits {
  double call_timeout = 60;        // seconds a call (or a prepare) may take
  double peak_bytes_per_second = 0;  // the device's measured peak: the physical floor (0: unknown)
  // Device cases whose buffers reach this many bytes are checked on the device while timed:
  // smaller ones cost less to send home than to watch ($BACKENDBENCH_DEVICE_CHECK_MIN_BYTES).
  std::size_t device_check_min_bytes = std::size_t{4} << 20;
};
// DriverLimits' default device_check_min_bytes, or $BACKENDBENCH_DEVICE_CHECK_MIN_BYTES ("off": never).
std::size_t default_device_check_min_bytes();

}  // namespace bb
