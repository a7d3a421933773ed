// What the report files (JUnit, CSV, Markdown, HTML) say alike: a test's failure in words, the
// skip reasons grouped, numbers formatted. How text from a run is made safe for each format is
// escape.hpp's: plugin messages can hold anything (invalid UTF-8, control characters, megabytes).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/escape.hpp"  // first_line is clean_text and truncate_text; the renderers escape with it
#include "run_record.hpp"

namespace bb {

// The first line of `s`, at most `max_bytes` (clean_text applied).
std::string first_line(std::string_view s, std::size_t max_bytes);
// A message's first line; for a Python traceback, the exception it ends with ("ValueError: ...").
std::string message_headline(std::string_view message);
// A CRASH's report as lines (crash_report.hpp): its first `max_frames` frames ("#0 run(bb::Call&)
// at k.cpp:5 (k.so+0x1138)") and the line that runs the test again; none without one. Text
// only: the renderers escape it.
std::vector<std::string> crash_lines(const nlohmann::json& crash, std::size_t max_frames);
// A message's headline with every number (sign, point, exponent, 0x... included) one '#': the
// failures of one implementation that differ only in their figures read as one group.
std::string message_shape(std::string_view message);

// "12.3 us", "4.56 ms"; "-" for none.
std::string format_seconds(double s);

// The test's failure as lines: its message, then the mismatch's figures (output, count/total,
// max abs/rel error, first index with actual vs expected, atol/rtol). Not cleaned.
std::string failure_details(const TestResult& r);
// "cpu", "cuda:1"
std::string device_label(const TestResult& r);
// The test's case with "#<repeat>" past the first pass and its device kind: "small[n=16]#1 (cpu)".
std::string test_label(const TestResult& r);
// Timing in one line: "median 12.3 us, IQR 12.1 us..12.6 us, min 12.0 us, max 14.2 us, ±0.8%, 120 samples".
std::string timing_line(const Timing& t);

// Numbers: "-" for none; never "nan" or "inf" in a report cell.
std::string format_speedup(const std::optional<double>& x);  // "1.23x"
std::string format_percent(double share);                    // 0.5 -> "50.0%"
bool finite(const std::optional<double>& x);

// SKIPPED tests by reason: each reason once, with the implementations it hit and how many tests
// each (an implementation whose device is missing is one entry, not one per test).
struct SkipGroup {
  std::string reason;
  std::vector<std::pair<std::string, std::size_t>> impls;  // (impl, tests), in run order
  std::size_t tests = 0;
};
std::vector<SkipGroup> skip_groups(const RunRecord& run);  // most tests first

// Each implementation's verdict counts, "CRASH=3 FAIL=1" (PASS left out).
std::map<std::string, std::string> verdict_counts_by_impl(const RunRecord& run);
// "failed", "skipped", "correct" or "not run" for an implementation's score.
std::string impl_status(const ImplScore& s);

// "1 test", "3 tests".
std::string plural(std::size_t n, const char* word);

}  // namespace bb
