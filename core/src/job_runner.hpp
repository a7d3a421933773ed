// What a worker does with one job: a TestRequest per test, sent to its executor; the reply
// made into the test's result (its identity, speedup against the baseline, percent of the
// device's peak; no time kept for an incorrect implementation); a baseline job's medians kept
// for the jobs that wait on it.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor.hpp"
#include "jobs.hpp"
#include "plan.hpp"
#include "results.hpp"
#include "session.hpp"

namespace bb {

// What the run knows while it runs (read-only).
struct SweepContext {
  const std::vector<OpPlan>& plans;
  const SessionOptions& options;
  const std::map<std::string, nlohmann::json>& device_kinds;  // kind -> its description
  std::function<std::string(int op, int impl)> device_of;
};

// Where a job's events go (the session's event queue).
struct JobEvents {
  std::function<void(const TestResult&)> started;   // op, impl, case_id, device filled
  std::function<void(TestResult, std::size_t order)> finished;
  std::function<void(const std::string&)> warning;
  std::function<void(double seconds)> measured;     // time inside timed regions (both sides of a pair)
};

// The result's identity, as reported, before it runs.
TestResult test_identity(const SweepContext& ctx, const TestSpec& t, int ordinal);

// Why an implementation cannot run a case on `device`, or "" if it can.
std::string skip_reason(const Implementation& impl, const Manifest& m, const ConcreteCase& c, const std::string& device,
                        const nlohmann::json& device_kind);

// Runs `job` with `executor` on device `ordinal` of its kind.
void run_job(const Job& job, int ordinal, Executor& executor, SweepContext& ctx, const JobEvents& events);

}  // namespace bb
