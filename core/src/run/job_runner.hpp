// What a worker slot does with one job: a TestRequest per test, driven through its workers
// (judge.hpp; supplied by worker_supply.hpp); the result given its identity and its share
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

#include "devices/device_kind.hpp"
#include "plan/jobs.hpp"
#include "plan/skip_rules.hpp"
#include "plan/plan.hpp"
#include "results.hpp"
#include "run/judge.hpp"
#include "run/session_options.hpp"
#include "run/sweep_context.hpp"
#include "run/workers/executor.hpp"
#include "run/workers/worker_stock.hpp"
#include "run/workers/worker_supply.hpp"

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


// Runs `job` with `workers` on device `ordinal` of its kind.
void run_job(const Job& job, int ordinal, SlotWorkers& workers, SweepContext& ctx, const JobEvents& events);

}  // namespace bb
