// What one test produced, and its JSON form (the worker protocol and the result files share it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats.hpp"

namespace bb {

enum class Verdict { pass, fail, error, crash, timeout, unwritten, input_mutated, out_of_bounds, nondeterministic, skipped };
const char* verdict_name(Verdict v);  // "PASS", "FAIL", ...
std::optional<Verdict> parse_verdict(const std::string& name);

struct Mismatch {
  std::string output;  // which output
  int64_t count = 0;   // mismatching elements
  int64_t total = 0;   // elements compared
  int64_t unwritten = 0;
  double max_abs_error = 0, max_rel_error = 0;
  std::string first_index;  // "[3, 17]"
  double actual = 0, expected = 0;
  double atol = 0, rtol = 0;
};

struct Timing {
  SampleStats stats;  // seconds per call
  std::string stop;   // converged | max_samples | timeout
  std::size_t batch = 1;
  double wall_time = 0;
};

struct TestResult {
  std::string op;
  std::string impl;     // "<op>__<stem>"
  std::string case_id;  // "correctness/small[dtype=float16]"
  std::string kind;     // correctness | performance
  std::string device = "cpu";
  Verdict verdict = Verdict::error;
  std::string message;
  std::optional<Mismatch> mismatch;
  std::optional<Timing> timing;
  std::optional<double> baseline_median;  // seconds
  std::optional<double> speedup;          // baseline median / this median
  std::optional<double> flops, bytes;     // work of the case
  std::optional<double> tflops, gbps;
  double duration = 0;  // seconds the test took, end to end
};

void to_json(nlohmann::json& j, const TestResult& r);
void from_json(const nlohmann::json& j, TestResult& r);

}  // namespace bb
