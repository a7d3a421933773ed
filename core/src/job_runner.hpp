// What a worker slot does with one job: a TestRequest per test, driven through its workers
// (test_driver.hpp; supplied by worker_supply.hpp); the result given its identity and its share
// of the device's peaks (measure/peak_shares.hpp); no time kept for an incorrect implementation.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "device_kind.hpp"
#include "sweep_context.hpp"
#include "executor.hpp"
#include "jobs.hpp"
#include "plan.hpp"
#include "results.hpp"
#include "session_options.hpp"
#include "test_driver.hpp"
#include "worker_stock.hpp"
#include "worker_supply.hpp"

namespace bb {

// Where a job's events go (the session's event queue).
struct JobEvents {
  std::function<void(const TestResult&)> started;   // op, impl, case_id, device filled
  std::function<void(TestResult, std::size_t order)> finished;
  std::function<void(const std::string&)> warning;
  std::function<void(double seconds)> measured;     // time inside timed regions (both sides of a pair)
};

// The result's identity, as reported, before it runs.
TestResult test_identity(const SweepContext& ctx, const TestSpec& t, int ordinal);

// Why an implementation does not support a case by what it declares (its dtypes, its
// preconditions), or "" if it does.
std::string unsupported_reason(const PluginInfo& info, const ConcreteCase& c);

// Why an implementation cannot run a case on `device` ("" if it can), and whether that is its
// own refusal (the devices, dtypes or preconditions it declares: Outcome::refused) rather than
// the machine's lack.
struct SkipReason {
  std::string why;
  bool refused = false;
};
// `device_kind`: the description of impl.device (null when it runs on none of the op's devices).
SkipReason skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const DeviceKind* device_kind);

// Runs `job` with `workers` on device `ordinal` of its kind.
void run_job(const Job& job, int ordinal, SlotWorkers& workers, SweepContext& ctx, const JobEvents& events);

}  // namespace bb
