// What one test produced, and its JSON form: results.json(l), what merge, compare and resume read back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/stats.hpp"
#include "verdict.hpp"

namespace bb {


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

// How close a call's outputs came to the reference, over every output compared (passing or not):
// the largest errors, and the largest share of its tolerance an element used (allclose.hpp's
// Comparison::tolerance_used: 1 is the edge, above 1 a mismatch), with the output it was in.
struct ErrorFigures {
  std::string output;
  double max_abs_error = 0, max_rel_error = 0;
  double tolerance_used = 0;
};

struct Timing {
  std::string mode = "cold";  // cold | hot
  SampleStats stats;          // seconds per call (on a device: GPU time between events)
  SampleStats host;           // host wall time per call, from the call to its completion
  std::string stop;           // converged | noise_plateau | max_samples | timeout (the budget ended it)
  std::size_t batch = 1;      // calls per sample
  std::size_t warmup_calls = 0;
  double wall_time = 0;       // seconds spent measuring, warm-up and flushes included
  double measured_time = 0;   // seconds inside timed regions
  double baseline_measured_time = 0;  // paired: seconds inside the baseline's timed regions
  std::size_t throttled = 0;  // samples discarded for a throttled SM clock
  double clock_mhz = 0;       // median SM clock over the kept samples (0: not read)
  bool blocking = false;      // launches queued behind a blocking kernel
  // Cold on a device (device_timer.hpp): "flush" | "discard" (how L2 was emptied), samples per
  // synchronisation, and the event pair's own cost as calibrated in this run (seconds; 0: not
  // calibrated). kernel_median(): the median less that cost, comparable with a profiler's
  // kernel duration.
  std::string eviction;
  std::size_t samples_per_sync = 1;
  // Every timed sample ran on inputs made for it just before it (fresh_inputs.hpp): "host" (a CPU
  // case's, made by the host), "device" (made on the device from the host's seed), "" (none).
  std::string fresh_inputs;
  double event_cost = 0;
  // A CPU pairing: the one CPU both sides were timed on (cpu_pin.hpp), -1 where they were not
  // pinned (a multi-threaded side, a device, no pairing).
  int pinned_cpu = -1;
  double kernel_median() const { return std::max(0.0, stats.median - event_cost); }
  std::vector<std::string> notes;
};

// The phases of a test in a worker: setup (manifest, libraries, device context), inputs
// (generated from the seed), reference (its call), check (the implementation's call and every
// check), timing (measuring, flushes and the paired baseline included); then host (the host's
// wall time less the worker's: process start, messages).
inline constexpr const char* kTestPhases[] = {"setup_s", "inputs_s", "reference_s", "check_s", "timing_s", "host_s"};

// Which test: set once, by the host, before the test runs (job_runner.hpp, test_identity).
struct TestId {
  std::string op;
  std::string impl;     // "<op>__<stem>"
  std::string case_id;  // "correctness/small[dtype=float16]"
  std::string variant;  // the case's value variant ("tiny"; cases.hpp), "" for the manifest's own
  std::string kind;     // correctness | performance
  std::string mode = "fwd";  // the pass it calls: fwd | bwd (plan/mode.hpp); a bwd case_id begins "bwd:"
  std::string device = "cpu";
  int device_index = 0;  // the device's ordinal (0 on the CPU)
  int repeat = 0;        // --repeat: which pass over the sweep (0-based)
  std::optional<double> flops, bytes;  // work of the case
  std::string shapes;    // the case's inputs: "x: 4096x1024 float16, weight: 1024 float16"
};

// What the checks found.
struct Outcome {
  Verdict verdict = Verdict::error;
  std::string message;
  // SKIPPED by the implementation's own word: the devices, dtypes or preconditions it declares,
  // or its call's BB_ERR_UNSUPPORTED (Python: NotImplementedError). Not the machine's lack (a
  // device missing, a package that will not import) nor the reference's. --strict scores it as a
  // failure (scores.hpp).
  bool refused = false;
  std::optional<Mismatch> mismatch;
  // Every output's distance from the reference, where the values were compared (a device check's
  // come from the device: errors over finite pairs, as the host counts them).
  std::optional<ErrorFigures> errors;
  // An output of zeros would pass this case too: every expected value is within the tolerance of
  // 0, so the case cannot tell an implementation that writes zeros from a right one.
  bool zeros_pass = false;
  // A CRASH's signal, faulting address and frames (crash_report.hpp), as the worker's last words
  // said; null otherwise.
  nlohmann::json crash;
};

// How fast: only a test that passed keeps any of it (an incorrect implementation is never
// reported with a time), so it is cleared as one.
struct Performance {
  std::optional<Timing> timing;
  std::optional<double> baseline_median;  // seconds
  std::optional<double> speedup;          // baseline / this: the paired speedup (paired.hpp)
  // The speedup's confidence interval and its coverage, from `speedup_pairs` alternating blocks
  // of the baseline and this implementation, each in its own worker, one running while the other is
  // frozen; the interval containing 1.0 is "no significant difference".
  std::optional<double> speedup_low, speedup_high, speedup_confidence;
  std::optional<double> speedup_pairs;
  // The relative floor the interval was widened by (paired.hpp, kProcessFloor): the bias two
  // processes may carry, which the per-implementation summary does not average away.
  std::optional<double> speedup_resolution;
  std::optional<double> tflops, gbps;
  // Percent of the device's peak bandwidth: measured once per device (the best of several
  // strategies: device_peak.hpp), and the theoretical figure from its memory clock and bus width.
  std::optional<double> peak_pct, peak_pct_theoretical;
  // With FLOPs on a device: percent of the roofline bound (roofline.hpp), which bound set it
  // ("compute" | "memory") and the compute peak used ("fp32", "fp16 tensor", "bf16 tensor").
  std::optional<double> roofline_pct;
  std::string roofline_bound, roofline_compute;
};

// Where the test's time went.
struct TestPhases {
  double duration = 0;  // seconds the test took, end to end
  // In seconds (kTestPhases), and the host's share: starting the worker, loading the libraries,
  // the messages (host_s: the host's wall time less the worker's).
  std::map<std::string, double> seconds;
};

// What the implementation printed during the test (stdout and stderr, captured by the worker's
// host: its head and tail when longer than the cap) and its full length in bytes.
struct PluginOutput {
  std::string text;
  std::size_t bytes = 0;
};

struct TestResult {
  TestId id;
  Outcome outcome;
  Performance performance;
  TestPhases phases;
  PluginOutput output;
};

// {output, max_abs_error, max_rel_error, tolerance_used}: results.json's `errors` and the checker's
// reply alike (JSON has no infinity: a tolerance_used written as null reads back infinite).
void to_json(nlohmann::json& j, const ErrorFigures& e);
void from_json(const nlohmann::json& j, ErrorFigures& e);
void to_json(nlohmann::json& j, const TestResult& r);
void from_json(const nlohmann::json& j, TestResult& r);

}  // namespace bb
