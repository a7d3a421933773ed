// The console: what a person at a terminal, or a CI log, sees while a run goes and when it ends.
//
// On a terminal one live status line is rewritten in place (tests done of the total, verdict
// counts, the test running, elapsed time, an ETA); the lines for tests that did not pass go
// above it. Not on a terminal there is no carriage return and no escape code: a plain progress
// line every few seconds instead, also while one long test runs. SKIPPED tests are grouped: an
// implementation whose device is missing gets one line, other reasons one line per
// (implementation, reason), with -v too. Tests that did not pass get a line each, the first
// few per implementation, and at the end a summary grouped by implementation, verdict and
// message. -v: a line for every test that ran; -q: only the final table.
//
// Events come from the session's thread; a ticker thread redraws the status line (or prints the
// progress line) while nothing happens. One mutex guards the state and the output.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "devices/host_load.hpp"
#include "report/case_table.hpp"
#include "report/report_text.hpp"
#include "report/reporter.hpp"

namespace bb {

namespace {

// "45s", "1m05s", "2h03m": elapsed time and ETA.
// "worker seconds: setup 1.2, inputs 0.4, ..." from the summed phases of the tests (several
// workers add up to more than the wall time); "" when there are none.
std::string time_breakdown(const RunRecord& s) {
  const auto tests = s.phases.find("tests");
  if (tests == s.phases.end() || !tests->is_object() || tests->empty()) return "";
  std::string parts;
  for (const char* phase : kTestPhases) {
    const double v = tests->value(phase, 0.0);
    std::string name(phase);
    name = name.substr(0, name.size() - 2);  // "_s"
    parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", name, v);
    if (name == "timing" && s.measured_time > 0) parts += fmt::format(" (inside timed regions {:.1f})", s.measured_time);
  }
  if (const double jit = tests->value("compile_s", 0.0); jit > 0) parts += fmt::format("; just-in-time compiling {:.1f} (never timed)", jit);
  std::string before;
  for (const char* p : {"plan_s", "devices_s"})
    if (s.phases.contains(p) && s.phases[p].is_number()) before += fmt::format(", {} {:.1f}", std::string(p).substr(0, std::string(p).size() - 2), s.phases[p].get<double>());
  // Python workers' starts: the warm interpreter's imports, once, then a fork each.
  if (const auto py = s.phases.find("python_interpreter"); py != s.phases.end() && py->is_object()) {
    if (py->contains("error"))
      parts += fmt::format("; Python workers started cold ({})", py->value("error", std::string()));
    else if (const auto kept = py->value("kept", nlohmann::json::object()); py->value("forks", 0) > 0 && kept.value("runs", 0) > 0)
      parts += fmt::format("; Python workers: an interpreter kept warm from an earlier run (PyTorch imported {:.0f} s ago; run {} it serves), "
                           "then {} forked from it ({:.0f} ms each at most)",
                           kept.value("age_s", 0.0), kept.value("runs", 0) + 1, py->value("forks", 0), 1000 * py->value("fork_s_max", 0.0));
    else if (py->value("forks", 0) > 0)
      parts += fmt::format("; Python workers: PyTorch imported once in {:.1f}, then {} forked from it ({:.0f} ms each at most){}",
                           py->value("import_s", 0.0), py->value("forks", 0), 1000 * py->value("fork_s_max", 0.0),
                           kept.contains("pid") ? " (kept warm for the next run)" : "");
  }
  return fmt::format("where the time went, in seconds{}; tests (summed over workers): {}", before, parts);
}

std::string format_duration(double s) {
  const auto t = static_cast<long long>(std::max(0.0, s) + 0.5);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
}

std::string tests(std::size_t n) { return fmt::format("{} test{}", n, n == 1 ? "" : "s"); }

// Where a test ran: "" on the CPU, " on cuda:1" on a device.
std::string where(const TestResult& r) {
  if (r.id.device.empty() || is_cpu(r.id.device)) return "";
  return fmt::format(" on {}:{}", r.id.device, r.id.device_index);
}

// "myop__myop_cpp performance/large[n=4096]", as the status line names a running test.
std::string label(const TestResult& r) {
  return fmt::format("{} {}{}{}", r.id.impl, r.id.case_id, where(r), r.id.repeat > 0 ? fmt::format(" (repeat {})", r.id.repeat + 1) : "");
}

// A started test is matched to its result by this.
std::string running_key(const TestResult& r) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", r.id.op, r.id.impl, r.id.case_id, r.id.device, r.id.device_index, r.id.repeat);
}

bool mentions(const std::string& text, const std::string& word) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return !word.empty() && lower(text).find(lower(word)) != std::string::npos;
}

// At most `width` bytes of `s`, not cutting a UTF-8 sequence.
std::string truncated(std::string s, std::size_t width) {
  if (s.size() <= width) return s;
  std::size_t n = width;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s;
}

// A crash's first frames (the worker's own words: its function names and files are the
// plugin's, shown as text only) and the line that runs the test again in the foreground.
std::string crash_text(const nlohmann::json& crash) {
  std::string out;
  for (const auto& line : crash_lines(crash, 6)) out += "\n      " + terminal_text(line);
  return out;
}

// What the implementation printed during the test: its last lines, indented, with how much
// there was (the results hold the head and the tail of all of it).
std::string output_lines(const TestResult& r) {
  constexpr std::size_t kLines = 8;
  std::string text = r.output.text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  text = terminal_text(text);  // a plugin's bytes never reach the terminal as controls
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  const std::size_t from = lines.size() > kLines ? lines.size() - kLines : 0;
  std::string out = fmt::format("\n      it printed ({} bytes{}):", r.output.bytes ? r.output.bytes : r.output.text.size(),
                                from > 0 ? fmt::format("; the last {} lines", kLines) : "");
  for (std::size_t i = from; i < lines.size(); ++i) out += "\n      | " + truncated(lines[i], 200);
  return out;
}

// What a run prints at its end: a line per implementation, the scores, where the tests ran and the
// time went, and the exit status. `planned`: the sweep was planned; `timed`: the run times its
// performance cases; `unusable`: libraries and manifests that could not be used.
void print_table(std::FILE* out, const RunRecord& s, bool quiet, bool planned, bool timed, std::size_t unusable) {
  // Stopped before a sweep was planned (an unknown --ops, no root): the error said it all; no
  // empty table, no scores of nothing.
  if (!planned && s.tests.empty()) {
    fmt::print(out, "exit status {}\n", s.exit_code);
    return;
  }
  // Per implementation: verdict counts, then speedup.
  std::map<std::string, std::map<std::string, int>> verdicts;
  for (const auto& r : s.tests) ++verdicts[r.id.impl][verdict_name(r.outcome.verdict)];
  // The name column as wide as the longest name (32 at least), so the columns stay aligned.
  std::size_t name_width = 32;
  for (const auto& is : s.scores.impls) name_width = std::max(name_width, is.impl.size());
  // The speedup's interval (paired timing) follows it; "n.s.": it holds 1.0, no significant difference.
  fmt::print(out, "{}{:<{}} {:>6} {:>6} {:>6} {:>8}  {:<19}  {}\n", quiet ? "" : "\n", "implementation", name_width, "pass", "fail", "skip",
             "speedup", "interval", "verdicts");
  fmt::print(out, "{}\n", std::string(name_width + 68, '-'));
  for (const auto& is : s.scores.impls) {
    std::string counts;
    for (const auto& [v, n] : verdicts[is.impl])
      if (v != "PASS") counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", v, n);
    std::string speed = is.speedup ? fmt::format("{:.2f}x", *is.speedup) : is.fully_correct ? "-" : !is.ran() ? "skipped" : "failed";
    std::string interval;
    if (is.speedup && is.speedup_low && is.speedup_high)
      interval = fmt::format("[{:.2f}, {:.2f}]{}", *is.speedup_low, *is.speedup_high, is.significant() ? "" : " n.s.");
    fmt::print(out, "{:<{}} {:>6} {:>6} {:>6} {:>8}  {:<19}  {}\n", is.impl, name_width, is.passed, is.failed, is.skipped, speed, interval,
               counts);
  }
  fmt::print(out, "\n");
  // Scores only where they mean something: no correctness rate without a test that ran, no
  // speedup or perf@p in a run that timed nothing (--correctness-only).
  for (const auto& os : s.scores.ops)  // where it was timed in more than one mode: each one's speedup too
    fmt::print(out, "op {:<20} correct {}/{}{}\n", os.op, os.correct_impls, os.impls,
               !timed ? "" : fmt::format("  geomean speedup {}{}", os.geomean_speedup ? fmt::format("{:.3f}x", *os.geomean_speedup) : "-",
                                         mode_speedups_text(os.speedup_by_mode)));
  std::string line = fmt::format("tests {}  passed {}  failed {}  skipped {}", s.scores.tests, s.scores.passed, s.scores.failed,
                                 s.scores.skipped);
  if (unusable > 0) line += fmt::format("  unusable {} (libraries or manifests: the errors above)", unusable);
  if (s.scores.passed + s.scores.failed > 0) line += fmt::format("  correctness {:.1f}%", s.scores.correctness_rate * 100);
  if (timed && s.scores.passed > 0) {
    line += fmt::format("  geomean speedup {}", s.scores.geomean_speedup ? fmt::format("{:.3f}x", *s.scores.geomean_speedup) : "-");
    for (const auto& [p, share] : s.scores.perf_at) line += fmt::format("  perf@{:g} {:.1f}%", p, share * 100);
  }
  fmt::print(out, "{}\n", line);
  if (s.scores.rule != ScoreRule::standard) fmt::print(out, "scored {}\n", score_rule_note(s.scores.rule));
  // The e2e tests and CI read these two lines: keep them as they are.
  fmt::print(out, "{} passed, {} failed, {} skipped\n", s.scores.passed, s.scores.failed, s.scores.skipped);
  // Where the tests that ran ran (GPU ordinals: which GPU a ctest resource group handed out).
  std::map<std::string, int> where;
  for (const auto& r : s.tests)
    if (r.outcome.verdict != Verdict::skipped) ++where[is_cpu(r.id.device) ? r.id.device : fmt::format("{}:{}", r.id.device, r.id.device_index)];
  if (where.size() > 1 || (where.size() == 1 && !is_cpu(where.begin()->first))) {
    std::string line;
    for (const auto& [d, n] : where) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", d, n);
    fmt::print(out, "tests per device: {}\n", line);
  }
  // Cases of the manifest's own that an implementation writing zeros would pass (value variants
  // of zeros and denormals are such cases by design: not listed).
  std::set<std::string> blind;
  for (const auto& r : s.tests)
    if (r.outcome.zeros_pass && r.id.variant.empty()) blind.insert(r.id.op + " " + r.id.case_id);
  if (!blind.empty())
    fmt::print(out, "{} case(s) cannot tell an all-zero output from a right one (every expected value within the tolerance of 0), e.g. {}\n",
               blind.size(), *blind.begin());
  // A busy host reads code as slower: said beside the figures it may have moved.
  for (const auto& d : disturbances(s.host_load))
    fmt::print(out, "the host was busy while the tests ran: {}; timings may read slow for that alone (compare --confirm re-times)\n", d);
  if (!s.interrupted.empty())
    fmt::print(out, "interrupted by {}: {} test(s) finished; the reports hold those (--resume LOG_DIR runs the rest)\n", s.interrupted,
               s.tests.size());
  fmt::print(out, "wall time {} ({:.1f} s)\n", format_duration(s.wall_time), s.wall_time);
  if (s.measured_time > 0)
    fmt::print(out, "timed {:.2f} s inside timed regions of {:.1f} s of wall time: wall/measured {:.1f}\n", s.measured_time, s.wall_time,
               s.wall_time / s.measured_time);
  if (const std::string where = time_breakdown(s); !where.empty()) fmt::print(out, "{}\n", where);
  fmt::print(out, "exit status {}\n", s.exit_code);
}

// A verdict's name padded to `width`, coloured on a terminal.
std::string verdict_word(const ConsoleOptions& o, Verdict v, std::size_t width = 0) {
  const std::string name = verdict_name(v);
  const std::string pad(name.size() < width ? width - name.size() : 0, ' ');
  if (!o.terminal || !o.colour) return name + pad;
  const VerdictKind k = verdict_kind(v);
  const char* c = k == VerdictKind::passed ? "32" : k == VerdictKind::skipped ? "33" : "31";  // green, yellow, red
  return fmt::format("\033[{}m{}\033[0m{}", c, name, pad);
}

// A finished test's line: its verdict, figures, message, crash, output and notes.
std::string test_line(const ConsoleOptions& o, const TestResult& r, std::size_t done, std::size_t total) {
  std::string line = fmt::format("[{}/{}] {} {} {}{}{}", done, total, verdict_word(o, r.outcome.verdict, 16), r.id.impl, r.id.case_id, where(r),
                                 r.id.repeat > 0 ? fmt::format(" (repeat {})", r.id.repeat + 1) : "");
  const bool on_device = !r.id.device.empty() && !is_cpu(r.id.device);
  if (r.performance.timing) {
    const auto& t = *r.performance.timing;
    line += fmt::format("  {} ±{:.1f}% ({} {}, {} samples{}, {})", format_seconds(t.stats.median), t.stats.rel_stdev * 100, t.mode,
                        on_device ? "GPU time" : "time", t.stats.samples, t.batch > 1 ? fmt::format(" of {}", t.batch) : "",
                        t.stop == "timeout" ? "budget" : t.stop == "noise_plateau" ? "noise plateau" : t.stop);
    if (on_device) line += fmt::format("  host {}", format_seconds(t.host.median));
  }
  if (r.performance.speedup) {
    line += fmt::format("  {:.2f}x", *r.performance.speedup);
    if (r.performance.speedup_low && r.performance.speedup_high)
      line += fmt::format(" [{:.2f}, {:.2f}]{}", *r.performance.speedup_low, *r.performance.speedup_high,
                          *r.performance.speedup_low <= 1.0 && *r.performance.speedup_high >= 1.0 ? " n.s." : "");
  }
  if (r.performance.tflops && *r.performance.tflops >= 1.0) line += fmt::format("  {:.1f} TFLOP/s", *r.performance.tflops);
  if (r.performance.gbps) line += fmt::format("  {:.1f} GB/s", *r.performance.gbps);
  if (r.performance.peak_pct) line += fmt::format(" ({:.0f}% of measured peak", *r.performance.peak_pct);
  if (r.performance.peak_pct && r.performance.peak_pct_theoretical) line += fmt::format(", {:.0f}% of theoretical", *r.performance.peak_pct_theoretical);
  if (r.performance.peak_pct) line += ")";
  if (!r.outcome.message.empty()) line += "\n      " + r.outcome.message;
  if (r.outcome.verdict == Verdict::crash) line += crash_text(r.outcome.crash);
  if (r.outcome.mismatch && r.outcome.message.find("output '" + r.outcome.mismatch->output + "'") == std::string::npos) {
    // The worker's message says this already; a result from elsewhere may not.
    const auto& m = *r.outcome.mismatch;
    line += fmt::format("\n      output '{}': {} of {} elements differ{} (atol {}, rtol {}); max abs error {:g}, max rel error {:g}; "
                        "first at {}: got {:g}, expected {:g}",
                        m.output, m.count, m.total, m.unwritten > 0 ? fmt::format(", {} unwritten", m.unwritten) : "", m.atol, m.rtol,
                        m.max_abs_error, m.max_rel_error, m.first_index, m.actual, m.expected);
  }
  if (!r.output.text.empty() && (r.outcome.verdict != Verdict::pass || o.verbose)) line += output_lines(r);
  if (r.performance.timing)
    for (const auto& n : r.performance.timing->notes)
      if ((n.find("budget") == std::string::npos && n.find("stopped improving") == std::string::npos) || o.verbose)
        line += "\n      note: " + n;
  return line;
}

class ConsoleReporter final : public Reporter {
 public:
  explicit ConsoleReporter(ConsoleOptions o) : o_(std::move(o)) {
    if (!o_.out) o_.out = stdout;
    if (!o_.err) o_.err = stderr;
    if (!o_.clock)
      o_.clock = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
    started_ = o_.clock();
  }

  ~ConsoleReporter() override {
    stop_ticker();
    std::lock_guard lock(m_);
    clear_status();
    std::fflush(o_.out);
  }

  void run_started(const RunRecord& run) override {
    std::lock_guard lock(m_);
    shard_count_ = run.shard.count;
    repeats_ = run.repeats;
    timed_ = !run.options.is_object() || run.options.value("performance", true);
    started_ = o_.clock();
    if (o_.quiet) return;
    print_line(fmt::format("backendbench: root {}", run.root));
    if (!o_.log_dir.empty()) print_line(fmt::format("backendbench: logs in {}", o_.log_dir.string()));
  }

  void op_planned(const OpReport& op) override {
    std::lock_guard lock(m_);
    flush_pending();
    for (const auto& impl : op.impls) cases_of_impl_[impl] = op.cases;
    if (!o_.quiet)
      for (const auto& w : op.warnings) error_line(fmt::format("warning: {}", w));
    for (const auto& e : op.errors) error_line(fmt::format("error: {}", e));
    unusable_ += op.errors.size();
    if (!o_.quiet && !op.reference.empty())
      print_line(fmt::format("{}: {} case(s), {} implementation(s), reference {} ({}){}", op.op, op.cases, op.impls.size(), op.reference,
                             op.reference_kind, op.baseline.empty() ? "" : ", baseline " + op.baseline));
  }

  void warning(const std::string& text) override {
    std::lock_guard lock(m_);
    error_line(fmt::format("warning: {}", terminal_text(text)));  // above the status line, on stderr
  }

  // One line per device of the kind, or one saying why the kind is unavailable.
  void device_described(const DeviceKind& d) override {
    std::lock_guard lock(m_);
    flush_pending();
    if (o_.quiet) return;
    if (!d.available) {
      print_line(fmt::format("{}: unavailable: {}", d.name, d.reason));
      return;
    }
    for (const auto& dev : d.devices) {
      std::string measured;
      if (dev.measured_gbps > 0)
        measured = fmt::format(", {:.0f} GB/s measured ({}){}", dev.measured_gbps, dev.measured_strategy, dev.measured_cached ? ", cached" : "");
      else if (dev.measure_error)
        measured = fmt::format(", copy bandwidth not measured: {}", *dev.measure_error);
      // The compute peaks: the best strategy of each kind, in the order first measured.
      std::vector<std::string> kinds;
      for (const auto& c : dev.compute)
        if (c.tflops > 0 && std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) kinds.push_back(c.kind);
      for (const auto& kind : kinds) measured += fmt::format(", {} {:.1f} TFLOP/s", kind, dev.peak_tflops(kind));
      print_line(fmt::format("{}:{}: {} ({}, {} multiprocessors, {:.0f} MiB L2, {:.1f} GiB, {:.0f} GB/s theoretical{}) [{}]", d.name,
                             dev.ordinal, dev.name, dev.arch, dev.multiprocessors, dev.l2_bytes / 1048576.0,
                             dev.memory_bytes / 1073741824.0, dev.peak_bandwidth_gbps, measured, d.runtime));
    }
  }

  void sweep_planned(const RunRecord& run, std::size_t total) override {
    std::lock_guard lock(m_);
    flush_pending();
    shard_count_ = run.shard.count;
    repeats_ = run.repeats;
    timed_ = !run.options.is_object() || run.options.value("performance", true);
    total_ = total;
    planned_ = true;
    start_sweep();
    draw_soon();
  }

  // Its line waits for its tests, to count them: the session reports every SKIPPED test before
  // the first one starts, so the line is printed when a test starts or one that ran ends (or
  // once all its tests are counted, where that number is known), and at the end.
  void impl_skipped(const std::string& impl, const std::string& device, const std::string& reason) override {
    std::lock_guard lock(m_);
    if (whole_impl_skipped_.insert(impl).second) pending_.push_back({impl, device, terminal_text(reason), 0});
  }

  void test_started(const TestResult& r) override {
    std::lock_guard lock(m_);
    flush_pending();
    start_sweep();
    running_.emplace_back(running_key(r), label(r));
    draw_soon();
  }

  void test_finished(const TestResult& result, std::size_t done, std::size_t total) override {
    // Its message as the terminal may see it, wherever it is printed (live, grouped, summarised);
    // what it printed is written out the same way where it is shown (output_lines).
    TestResult r = result;
    r.outcome.message = terminal_text(r.outcome.message);
    std::lock_guard lock(m_);
    start_sweep();
    done_ = done;
    total_ = total;
    const std::string key = running_key(r);
    if (auto it = std::find_if(running_.begin(), running_.end(), [&](const auto& e) { return e.first == key; }); it != running_.end())
      running_.erase(it);

    if (r.outcome.verdict == Verdict::skipped) {
      ++skipped_;
      auto p = std::find_if(pending_.begin(), pending_.end(), [&](const PendingSkip& s) { return s.impl == r.id.impl; });
      if (p != pending_.end()) {
        if (++p->count == expected_tests(r.id.impl)) flush_pending(r.id.impl);
      } else if (!whole_impl_skipped_.count(r.id.impl)) {
        add_to_group(r.id.impl, r.outcome.message);
      }  // else: after its impl_skipped line, counted in the table only
    } else {
      flush_pending();
      ++ran_;
      ++(r.outcome.verdict == Verdict::pass ? passed_ : failed_);
    }
    // A line per test that did not pass, the first few of each implementation (all with -v; a
    // pass too with -v); the rest are counted in the summary by implementation at the end.
    // SKIPPED tests are grouped by reason, with -v too.
    const bool not_passed = r.outcome.verdict != Verdict::pass && r.outcome.verdict != Verdict::skipped;
    if (not_passed) note_failure(r);
    if (!o_.quiet && not_passed) {
      const std::size_t shown = ++live_failures_[r.id.impl];
      if (o_.verbose || shown <= kLiveFailuresPerImpl) print_line(test_line(o_, r, done, total));
      else if (shown == kLiveFailuresPerImpl + 1)
        print_line(fmt::format("      ... more of {}'s tests did not pass: they are summarised at the end", r.id.impl));
    } else if (!o_.quiet && o_.verbose && r.outcome.verdict == Verdict::pass) {
      print_line(test_line(o_, r, done, total));
    }
    if (++finished_of_impl_[r.id.impl] == expected_tests(r.id.impl)) flush_groups(r.id.impl);
    draw_soon();
    if (!o_.terminal) progress_if_due();
  }

  void run_finished(const RunRecord& s) override {
    stop_ticker();
    std::lock_guard lock(m_);
    clear_status();
    flush_pending();
    flush_groups("");
    if (!o_.quiet) print_failures();
    if (o_.case_table) std::fputs(case_table_text(s).c_str(), o_.out);
    print_table(o_.out, s, o_.quiet, planned_, timed_, unusable_);
    std::fflush(o_.out);
    std::fflush(o_.err);
  }

 private:
  struct PendingSkip {
    std::string impl, device, reason;
    std::size_t count = 0;
  };
  struct FailureGroup {
    std::string shape;  // verdict and message_shape
    Verdict verdict = Verdict::fail;
    std::string example;  // the first message's headline (message_headline)
    std::vector<std::string> cases;
  };
  static constexpr std::size_t kLiveFailuresPerImpl = 5;
  struct SkipGroup {
    std::string impl, reason;
    std::size_t count = 0;
  };

  // ---- lines ------------------------------------------------------------------------------

  // A line above the status line: clear it, print, draw it again.
  void print_line(const std::string& text) {
    clear_status();
    fmt::print(o_.out, "{}\n", text);
    if (status_wanted()) draw_status();
    std::fflush(o_.out);
  }

  void error_line(const std::string& text) {
    clear_status();
    std::fflush(o_.out);
    fmt::print(o_.err, "{}\n", text);
    std::fflush(o_.err);
    if (status_wanted()) draw_status();
  }

  // ---- SKIPPED, grouped ---------------------------------------------------------------------

  // Tests an implementation has in this run, where known (op_planned's cases, every repeat; not
  // known on a shard); 0: unknown.
  std::size_t expected_tests(const std::string& impl) const {
    if (shard_count_ > 1) return 0;
    auto it = cases_of_impl_.find(impl);
    return it == cases_of_impl_.end() ? 0 : it->second * static_cast<std::size_t>(std::max(1, repeats_));
  }

  // The lines of impl_skipped of `impl` ("": every one).
  void flush_pending(const std::string& impl = "") {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (!impl.empty() && it->impl != impl) {
        ++it;
        continue;
      }
      const std::string reason = mentions(it->reason, it->device) ? it->reason : fmt::format("{}: {}", it->device, it->reason);
      if (!o_.quiet)
        print_line(fmt::format("{} {}: all {}: {}", verdict_word(o_, Verdict::skipped), it->impl, it->count > 0 ? tests(it->count) : "its tests", reason));
      it = pending_.erase(it);
    }
  }

  void add_to_group(const std::string& impl, const std::string& reason) {
    for (auto& g : groups_)
      if (g.impl == impl && g.reason == reason) {
        ++g.count;
        return;
      }
    groups_.push_back({impl, reason, 1});
  }

  // The groups of `impl` ("": every one), printed once. -v printed each test already.
  void flush_groups(const std::string& impl) {
    for (auto it = groups_.begin(); it != groups_.end();) {
      if (!impl.empty() && it->impl != impl) {
        ++it;
        continue;
      }
      if (!o_.quiet) {
        const bool all = it->count == expected_tests(it->impl);
        print_line(fmt::format("{} {}: {}{}: {}", verdict_word(o_, Verdict::skipped), it->impl, all ? "all " : "", tests(it->count),
                               it->reason.empty() ? "(no reason given)" : it->reason));
      }
      it = groups_.erase(it);
    }
  }

  // ---- tests that did not pass, by implementation ---------------------------------------------

  void note_failure(const TestResult& r) {
    auto& groups = failures_[r.id.impl];
    if (std::find(failure_order_.begin(), failure_order_.end(), r.id.impl) == failure_order_.end()) failure_order_.push_back(r.id.impl);
    const std::string shape = fmt::format("{}\n{}", verdict_name(r.outcome.verdict), message_shape(r.outcome.message));
    auto g = std::find_if(groups.begin(), groups.end(), [&](const FailureGroup& f) { return f.shape == shape; });
    if (g == groups.end()) g = groups.insert(groups.end(), {shape, r.outcome.verdict, message_headline(r.outcome.message), {}});
    g->cases.push_back(r.id.case_id + where(r) + (r.id.repeat > 0 ? fmt::format(" (repeat {})", r.id.repeat + 1) : ""));
  }

  // "not passed, by implementation": each implementation's tests that did not pass, grouped by
  // verdict and message, with a few of the cases and one message in full.
  void print_failures() {
    if (failure_order_.empty()) return;
    fmt::print(o_.out, "\nnot passed, by implementation:\n");
    for (const auto& impl : failure_order_) {
      const auto& groups = failures_[impl];
      std::map<std::string, std::size_t> by_verdict;
      std::size_t n = 0;
      for (const auto& g : groups) {
        by_verdict[verdict_name(g.verdict)] += g.cases.size();
        n += g.cases.size();
      }
      std::string counts;
      for (const auto& [v, k] : by_verdict) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", v, k);
      fmt::print(o_.out, "  {}: {} of {} ({})\n", impl, n, tests(finished_of_impl_[impl]), counts);
      for (const auto& g : groups) {
        fmt::print(o_.out, "    {} x{}: {}\n", verdict_word(o_, g.verdict), g.cases.size(), truncated(g.example, 200));
        const std::size_t listed = std::min<std::size_t>(g.cases.size(), 3);
        std::string cases;
        for (std::size_t i = 0; i < listed; ++i) cases += fmt::format("{}{}", i ? ", " : "", g.cases[i]);
        if (g.cases.size() > listed) cases += fmt::format(" and {} more", g.cases.size() - listed);
        fmt::print(o_.out, "      {}\n", cases);
      }
    }
  }

  // ---- status line (terminal) and progress line (not) ---------------------------------------

  void start_sweep() {
    if (sweep_started_) return;
    sweep_started_ = true;
    sweep_start_ = last_progress_ = o_.clock();
    if (!o_.quiet) ticker_ = std::thread([this] { tick(); });
  }

  bool status_wanted() const { return o_.terminal && !o_.quiet && sweep_started_ && !finished_; }

  // "pass 100  fail 3  skip 17  elapsed 1m05s  eta 3m10s  running myop__myop_cpp performance/large"
  std::string status_text() const {
    const double now = o_.clock();
    std::string eta = "-";
    if (total_ > 0 && done_ >= total_) {
      eta = "0s";
    } else if (ran_ >= 3) {
      // From the rate of the tests that ran: SKIPPED ones take no time, and counting them would
      // promise too early an end.
      eta = format_duration(static_cast<double>(total_ - std::min(done_, total_)) * (now - sweep_start_) / static_cast<double>(ran_));
    }
    std::string text = fmt::format("pass {}  fail {}  skip {}  elapsed {}  eta {}", passed_, failed_, skipped_, format_duration(now - started_), eta);
    if (!running_.empty())
      text += fmt::format("  running {}{}", running_.back().second, running_.size() > 1 ? fmt::format(" (+{} more)", running_.size() - 1) : "");
    return text;
  }

  std::size_t columns() const {
    if (o_.width > 0) return static_cast<std::size_t>(o_.width);
    winsize ws{};
    if (ioctl(fileno(o_.out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return static_cast<std::size_t>(std::atoi(c));
    return 100;
  }

  // The status line, one screen line wide (a wrapped line could not be rewritten in place).
  void draw_status() {
    const std::string text = truncated(fmt::format("[{}/{}]  {}", done_, total_, status_text()), std::max<std::size_t>(columns(), 20) - 1);
    fmt::print(o_.out, "\r\033[K{}", text);
    std::fflush(o_.out);
    status_shown_ = true;
    dirty_ = false;
    last_draw_ = o_.clock();
  }

  void clear_status() {
    if (status_shown_) fmt::print(o_.out, "\r\033[K");
    status_shown_ = false;
  }

  // At most ~10 redraws a second: a change within 0.1 s of the last one waits for the ticker.
  void draw_soon() {
    if (!status_wanted()) return;
    if (o_.clock() - last_draw_ >= 0.1) draw_status();
    else dirty_ = true;
  }

  void progress_if_due() {
    if (o_.quiet || !sweep_started_ || finished_ || o_.clock() - last_progress_ < o_.progress_interval) return;
    last_progress_ = o_.clock();
    fmt::print(o_.out, "[progress] {}/{} done  {}\n", done_, total_, status_text());
    std::fflush(o_.out);
  }

  void tick() {
    const double period = o_.terminal ? 0.1 : std::clamp(o_.progress_interval / 4, 0.01, 0.25);
    std::unique_lock lock(m_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::duration<double>(period));
      if (stopping_) break;
      if (!o_.terminal) progress_if_due();
      else if (status_wanted() && o_.clock() - last_draw_ >= (dirty_ ? 0.1 : 1.0)) draw_status();  // elapsed time moves on
    }
  }

  void stop_ticker() {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
      finished_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }

  // ---- the final table ----------------------------------------------------------------------

  ConsoleOptions o_;
  int shard_count_ = 1, repeats_ = 1;
  bool timed_ = true;  // the run times its performance cases
  std::mutex m_;
  std::condition_variable cv_;
  std::thread ticker_;
  bool stopping_ = false, finished_ = false;

  double started_ = 0, sweep_start_ = 0, last_draw_ = -1e9, last_progress_ = 0;
  bool sweep_started_ = false, status_shown_ = false, dirty_ = false;
  bool planned_ = false;  // sweep_planned came: the run got as far as its tests
  std::size_t done_ = 0, total_ = 0, passed_ = 0, failed_ = 0, skipped_ = 0, ran_ = 0;
  std::size_t unusable_ = 0;  // libraries and manifests that could not be used (op_planned's errors)
  std::vector<std::pair<std::string, std::string>> running_;  // (key, label), oldest first

  std::map<std::string, std::size_t> cases_of_impl_;     // from op_planned
  std::map<std::string, std::size_t> finished_of_impl_;  // tests reported so far
  std::vector<PendingSkip> pending_;                     // impl_skipped, its line not yet printed
  std::set<std::string> whole_impl_skipped_;
  std::map<std::string, std::size_t> live_failures_;  // lines printed per implementation
  std::map<std::string, std::vector<FailureGroup>> failures_;
  std::vector<std::string> failure_order_;  // implementations, as their first failure came
  std::vector<SkipGroup> groups_;  // other SKIPPED tests, printed once the implementation's tests end
};

}  // namespace

std::unique_ptr<Reporter> make_console_reporter(ConsoleOptions options) { return std::make_unique<ConsoleReporter>(std::move(options)); }

}  // namespace bb
