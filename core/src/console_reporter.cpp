#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "reporter.hpp"

namespace bb {

std::string format_seconds(double s) {
  if (s <= 0) return "-";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

namespace {

class ConsoleReporter final : public Reporter {
 public:
  explicit ConsoleReporter(ConsoleOptions o) : o_(o) {}

  void run_started(const RunInfo& info) override {
    fmt::print("backendbench: root {}\n", info.root.string());
    if (!info.log_dir.empty()) fmt::print("backendbench: logs in {}\n", info.log_dir.string());
  }

  void op_planned(const OpReport& op) override {
    for (const auto& w : op.warnings) fmt::print(stderr, "warning: {}\n", w);
    for (const auto& e : op.errors) fmt::print(stderr, "error: {}\n", e);
    if (!op.reference.empty())
      fmt::print("{}: {} case(s), {} implementation(s), reference {} ({}){}\n", op.op, op.cases, op.impls.size(), op.reference,
                 op.reference_kind, op.baseline.empty() ? "" : ", baseline " + op.baseline);
  }

  void device_described(const nlohmann::json& d) override {
    const std::string name = d.value("name", "?");
    if (!d.value("available", false)) {
      fmt::print("{}: unavailable: {}\n", name, d.value("reason", "?"));
      return;
    }
    for (const auto& dev : d.value("devices", nlohmann::json::array())) {
      std::string measured;
      const auto mb = dev.value("measured_bandwidth", nlohmann::json::object());
      if (mb.is_object() && mb.value("copy_gbps", 0.0) > 0)
        measured = fmt::format(", {:.0f} GB/s measured by a copy kernel{}", mb.value("copy_gbps", 0.0), mb.value("cached", false) ? " (cached)" : "");
      else if (mb.is_object() && mb.contains("error"))
        measured = fmt::format(", copy bandwidth not measured: {}", mb.value("error", ""));
      fmt::print("{}:{}: {} ({}, {} multiprocessors, {:.0f} MiB L2, {:.1f} GiB, {:.0f} GB/s theoretical{}) [{}]\n", name,
                 dev.value("ordinal", 0), dev.value("name", "?"), dev.value("arch", "?"), dev.value("multiprocessors", 0),
                 dev.value("l2_bytes", 0.0) / 1048576.0, dev.value("memory_bytes", 0.0) / 1073741824.0,
                 dev.value("peak_bandwidth_gbps", 0.0), measured, d.value("runtime", ""));
    }
  }

  void test_finished(const TestResult& r, std::size_t done, std::size_t total) override {
    const bool interesting = r.verdict != Verdict::pass && r.verdict != Verdict::skipped;
    if (!o_.verbose && !interesting && r.verdict != Verdict::skipped && !r.timing) {
      progress(done, total);
      return;
    }
    std::string line = fmt::format("[{}/{}] {:<16} {} {}{}", done, total, verdict(r.verdict), r.impl, r.case_id,
                                   r.device.empty() || r.device == "cpu" ? "" : " on " + r.device);
    if (r.timing) {
      const auto& t = *r.timing;
      line += fmt::format("  {} ±{:.1f}% ({} {}, {} samples{}, {})", format_seconds(t.stats.median), t.stats.rel_stdev * 100, t.mode,
                          r.device.empty() || r.device == "cpu" ? "time" : "GPU time", t.stats.samples,
                          t.batch > 1 ? fmt::format(" of {}", t.batch) : "", t.stop == "timeout" ? "budget" : t.stop == "noise_plateau" ? "noise plateau" : t.stop);
      if (!r.device.empty() && r.device != "cpu") line += fmt::format("  host {}", format_seconds(t.host.median));
    }
    if (r.speedup) line += fmt::format("  {:.2f}x", *r.speedup);
    if (r.tflops && *r.tflops >= 1.0) line += fmt::format("  {:.1f} TFLOP/s", *r.tflops);
    if (r.gbps) line += fmt::format("  {:.1f} GB/s", *r.gbps);
    if (r.peak_pct) line += fmt::format(" ({:.0f}% of measured peak", *r.peak_pct);
    if (r.peak_pct && r.peak_pct_theoretical) line += fmt::format(", {:.0f}% of theoretical", *r.peak_pct_theoretical);
    if (r.peak_pct) line += ")";
    if (!r.message.empty()) line += "\n      " + r.message;
    if (r.timing)
      for (const auto& n : r.timing->notes)
        if ((n.find("budget") == std::string::npos && n.find("stopped improving") == std::string::npos) || o_.verbose)
          line += "\n      note: " + n;
    clear_progress();
    fmt::print("{}\n", line);
    std::fflush(stdout);
  }

  void run_finished(const RunSummary& s) override {
    clear_progress();
    // Per implementation: verdict counts, then timing and speedup.
    std::map<std::string, std::map<std::string, int>> verdicts;
    for (const auto& r : s.results) ++verdicts[r.impl][verdict_name(r.verdict)];
    fmt::print("\n{:<32} {:>6} {:>6} {:>6} {:>8}  {}\n", "implementation", "pass", "fail", "skip", "speedup", "verdicts");
    fmt::print("{}\n", std::string(90, '-'));
    for (const auto& is : s.scores.impls) {
      std::string counts;
      for (const auto& [v, n] : verdicts[is.impl])
        if (v != "PASS") counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", v, n);
      std::string speed = is.speedup ? fmt::format("{:.2f}x", *is.speedup) : is.fully_correct ? "-" : !is.ran() ? "skipped" : "failed";
      fmt::print("{:<32} {:>6} {:>6} {:>6} {:>8}  {}\n", is.impl, is.passed, is.failed, is.skipped, speed, counts);
    }
    fmt::print("\n");
    for (const auto& os : s.scores.ops)
      fmt::print("op {:<20} correct {}/{}  geomean speedup {}\n", os.op, os.correct_impls, os.impls,
                 os.geomean_speedup ? fmt::format("{:.3f}x", *os.geomean_speedup) : "-");
    std::string perf;
    for (const auto& [p, share] : s.scores.perf_at) perf += fmt::format("  perf@{:g} {:.1f}%", p, share * 100);
    fmt::print("tests {}  passed {}  failed {}  skipped {}  correctness {:.1f}%  geomean speedup {}{}\n", s.scores.tests,
               s.scores.passed, s.scores.failed, s.scores.skipped, s.scores.correctness_rate * 100,
               s.scores.geomean_speedup ? fmt::format("{:.3f}x", *s.scores.geomean_speedup) : "-", perf);
    fmt::print("{} passed, {} failed, {} skipped\n", s.scores.passed, s.scores.failed, s.scores.skipped);
    if (s.measured_time > 0)
      fmt::print("timed {:.2f} s inside timed regions of {:.1f} s of wall time: wall/measured {:.1f}\n", s.measured_time, s.wall_time,
                 s.wall_time / s.measured_time);
    fmt::print("exit status {} ({:.1f} s)\n", s.exit_code, s.wall_time);
    std::fflush(stdout);
  }

 private:
  std::string verdict(Verdict v) const {
    if (!o_.color) return verdict_name(v);
    const char* c = v == Verdict::pass ? "32" : v == Verdict::skipped ? "33" : "31";
    return fmt::format("\033[{}m{}\033[0m", c, verdict_name(v));
  }
  void progress(std::size_t done, std::size_t total) {
    if (!o_.color) return;  // a terminal: rewrite one status line
    fmt::print("\r[{}/{}]", done, total);
    std::fflush(stdout);
    progress_shown_ = true;
  }
  void clear_progress() {
    if (progress_shown_) fmt::print("\r\033[K");
    progress_shown_ = false;
  }
  ConsoleOptions o_;
  bool progress_shown_ = false;
};

}  // namespace

std::unique_ptr<Reporter> make_console_reporter(ConsoleOptions options) { return std::make_unique<ConsoleReporter>(options); }

}  // namespace bb
