// What the report files (JUnit, CSV, Markdown, HTML) say alike: a test's failure in words, the
// skip reasons grouped, numbers formatted, and text made safe before any format's escaping.
// Plugin messages can hold anything (invalid UTF-8, control characters, megabytes), so every
// string from a run passes through clean_text() first.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run_record.hpp"

namespace bb {

// Valid UTF-8 (invalid bytes become U+FFFD) without the characters XML 1.0 forbids: C0 controls
// but tab, newline and carriage return become "\xNN" written out; U+FFFE and U+FFFF become U+FFFD.
std::string clean_text(std::string_view s);
// clean_text for a terminal (the console): carriage returns and C1 controls written out too, so
// that what a plugin printed cannot redraw a line or start an escape sequence.
std::string terminal_text(std::string_view s);
// At most `max_bytes` bytes of `s`, cut at a UTF-8 character boundary, with "... (N more bytes)".
std::string truncate_text(std::string_view s, std::size_t max_bytes);
// The first line of `s`, at most `max_bytes` (clean_text applied).
std::string first_line(std::string_view s, std::size_t max_bytes);

// "12.3 us", "4.56 ms"; "-" for none.
std::string format_seconds(double s);

// Failed: any verdict but PASS and SKIPPED.
bool is_failure(Verdict v);
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
// The implementation's score, or null when the run's scores do not list it.
const ImplScore* find_impl_score(const Scores& s, const std::string& op, const std::string& impl);
// "failed", "skipped", "correct" or "not run" for an implementation's score.
std::string impl_status(const ImplScore& s);

// "1 test", "3 tests".
std::string plural(std::size_t n, const char* word);

}  // namespace bb
