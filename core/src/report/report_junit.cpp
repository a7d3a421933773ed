// junit.xml: the run in the JUnit XML that Jenkins' junit plugin and GitLab's test reports read
// (test/fixtures/junit/junit.xsd states the shape; a unit test validates against it).
//
//   <testsuites>   the run: its counts and wall time
//   <testsuite>    one per implementation, named after it, package = the op; <properties> hold
//                  the sweep id, the op's seed, reference and baseline, the host and the tool
//   <testcase>     one per test result: classname "<op>.<impl>" (Jenkins shows the op as the
//                  package and the implementation as the class), name "<case>[#repeat] (<device>)"
//
// Verdicts (verdict.hpp, by kind): PASS is a plain testcase; a failed one (FAIL, UNWRITTEN,
// INPUT_MUTATED, OUT_OF_BOUNDS, NONDETERMINISTIC, IMPLAUSIBLE) a <failure type="VERDICT">; an
// error (ERROR, CRASH, TIMEOUT) an <error>; SKIPPED a <skipped message="why">. The failure's text holds the message and the mismatch's figures; a
// timed test's <system-out> its timing, speedup and bandwidth. An op that could not be used
// (manifest error, unusable library) gets a testcase "load" with an <error>, so a CI job that
// reads only this file still sees it.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "report/escape.hpp"
#include "report/report_files.hpp"
#include "report/report_text.hpp"

namespace bb {

namespace {

constexpr std::size_t kMaxMessageAttribute = 1000;  // the one-line message= of a failure
constexpr std::size_t kMaxText = 64 * 1024;          // a failure's text, a system-out

// Attribute values; element text (a failure's, a system-out) cut to kMaxText bytes before it is escaped.
std::string xml(std::string_view raw) { return xml_escape(raw, true); }
std::string xml_text(std::string_view raw) { return xml_escape(truncate_text(raw, kMaxText), false); }

// xs:decimal: no exponent, no NaN.
std::string seconds(double s) { return fmt::format("{:.6f}", std::isfinite(s) && s > 0 ? s : 0.0); }

std::string json_text(const nlohmann::json& j) {
  if (j.is_null()) return "";
  return j.is_string() ? j.get<std::string>() : j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
std::string json_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return json_text(*at);
}

bool is_error_verdict(Verdict v) { return verdict_kind(v) == VerdictKind::error; }

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  void add(const TestResult& r) {
    ++tests;
    if (r.outcome.verdict == Verdict::skipped) ++skipped;
    else if (is_error_verdict(r.outcome.verdict)) ++errors;
    else if (r.outcome.verdict != Verdict::pass) ++failures;
    if (std::isfinite(r.phases.duration) && r.phases.duration > 0) time += r.phases.duration;
  }
  void add(const Counts& c) {
    tests += c.tests, failures += c.failures, errors += c.errors, skipped += c.skipped;
    time += c.time;
  }
};

// A timed test's figures, for its <system-out>.
std::string timing_text(const TestResult& r) {
  std::string out;
  if (r.performance.timing) {
    out += "time: " + timing_line(*r.performance.timing);
    if (!r.performance.timing->stop.empty()) out += ", stopped: " + r.performance.timing->stop;
    if (r.performance.timing->stats.iqr > 0 && r.performance.timing->stats.median > 0)
      out += fmt::format("\nIQR/median: {:.1f}%", 100 * r.performance.timing->stats.iqr / r.performance.timing->stats.median);
    if (!is_cpu(r.id.device) && r.performance.timing->host.median > 0) out += "\nhost time: median " + format_seconds(r.performance.timing->host.median);
    for (const auto& n : r.performance.timing->notes) out += "\nnote: " + n;
  }
  if (finite(r.performance.baseline_median)) out += "\nbaseline median: " + format_seconds(*r.performance.baseline_median);
  if (finite(r.performance.speedup)) out += fmt::format("\nspeedup: {:.3f}x", *r.performance.speedup);
  if (finite(r.performance.tflops)) out += fmt::format("\nTFLOP/s: {:.3f}", *r.performance.tflops);
  if (finite(r.performance.gbps)) out += fmt::format("\nGB/s: {:.1f}", *r.performance.gbps);
  if (finite(r.performance.peak_pct)) out += fmt::format("\npercent of peak bandwidth: {:.1f}% (measured copy)", *r.performance.peak_pct);
  if (finite(r.performance.peak_pct_theoretical)) out += fmt::format(", {:.1f}% (theoretical)", *r.performance.peak_pct_theoretical);
  if (!out.empty() && out.front() == '\n') out.erase(0, 1);
  return out;
}

void write_testcase(std::string& out, const TestResult& r) {
  out += fmt::format("    <testcase name=\"{}\" classname=\"{}.{}\" time=\"{}\"", xml(test_label(r)), xml(r.id.op), xml(r.id.impl), seconds(r.phases.duration));
  std::string sysout = timing_text(r);
  // What the implementation printed during the test, as CI systems show a test's output.
  if (!r.output.text.empty())
    sysout += fmt::format("{}printed ({} bytes):\n{}", sysout.empty() ? "" : "\n", r.output.bytes ? r.output.bytes : r.output.text.size(),
                          r.output.text.substr(0, kMaxText));
  if (r.outcome.verdict == Verdict::pass && sysout.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  const std::string where =
      fmt::format("{} {}{} on {}", r.id.impl, r.id.case_id, r.id.repeat > 0 ? fmt::format(" (repeat {})", r.id.repeat) : "", device_label(r));
  if (r.outcome.verdict == Verdict::skipped) {
    out += fmt::format("      <skipped message=\"{}\"/>\n", xml(first_line(r.outcome.message, kMaxMessageAttribute)));
  } else if (r.outcome.verdict != Verdict::pass) {
    const char* element = is_error_verdict(r.outcome.verdict) ? "error" : "failure";
    std::string message = first_line(message_headline(r.outcome.message), kMaxMessageAttribute);
    if (message.empty()) message = verdict_name(r.outcome.verdict);
    out += fmt::format("      <{} message=\"{}\" type=\"{}\">{}\n{}\n{}</{}>\n", element, xml(message), verdict_name(r.outcome.verdict),
                       verdict_name(r.outcome.verdict), xml_text(where), xml_text(failure_details(r)), element);
  }
  if (!sysout.empty()) out += fmt::format("      <system-out>{}</system-out>\n", xml_text(sysout));
  out += "    </testcase>\n";
}

void property(std::string& out, const char* name, const std::string& value) {
  if (!value.empty()) out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml(value));
}

}  // namespace

std::string junit_xml(const RunRecord& run) {
  // The suites: the ops' implementations in order, then any other implementation the tests name.
  struct Suite {
    std::string op, impl;
    std::vector<const TestResult*> tests;
    Counts counts;
  };
  std::vector<Suite> suites;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  auto suite = [&](const std::string& op, const std::string& impl) -> Suite& {
    auto [it, fresh] = index.try_emplace({op, impl}, suites.size());
    if (fresh) suites.push_back({op, impl, {}, {}});
    return suites[it->second];
  };
  for (const auto& op : run.ops)
    for (const auto& impl : op.impls) suite(op.op, impl);
  for (const auto& t : run.tests) {
    Suite& s = suite(t.id.op, t.id.impl);
    s.tests.push_back(&t);
    s.counts.add(t);
  }
  std::map<std::string, const OpReport*> ops;
  for (const auto& op : run.ops) ops[op.op] = &op;

  Counts total;
  for (const auto& s : suites) total.add(s.counts);
  std::size_t load_errors = 0;
  for (const auto& op : run.ops) load_errors += op.errors.empty() ? 0 : 1;

  const std::string hostname = json_at(run.host, {"hostname"});
  std::string version = json_at(run.provenance, {"tool", "version"});
  if (version.empty()) version = json_at(run.host, {"backendbench_version"});
  const std::string commit = json_at(run.provenance, {"tool", "commit"});

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"backendbench\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
                     total.tests + load_errors, total.failures, total.errors + load_errors, total.skipped,
                     seconds(run.wall_time > 0 ? run.wall_time : total.time));
  // An op that could not be used: a suite of its own, with one error.
  int id = 0;
  for (const auto& op : run.ops) {
    if (op.errors.empty()) continue;
    std::string text;
    for (const auto& e : op.errors) text += e + "\n";
    out += fmt::format("  <testsuite name=\"{}\" package=\"{}\" id=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000000\">\n",
                       xml(op.op + " (load)"), xml(op.op), id++);
    out += fmt::format("    <testcase name=\"load\" classname=\"{}\" time=\"0.000000\">\n", xml(op.op));
    out += fmt::format("      <error message=\"{}\" type=\"UNUSABLE\">{}</error>\n", xml(first_line(op.errors.front(), kMaxMessageAttribute)),
                       xml_text(text));
    out += "    </testcase>\n  </testsuite>\n";
  }
  for (const auto& s : suites) {
    out += fmt::format("  <testsuite name=\"{}\" package=\"{}\" id=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\"",
                       xml(s.impl), xml(s.op), id++, s.counts.tests, s.counts.failures, s.counts.errors, s.counts.skipped, seconds(s.counts.time));
    if (!run.started_at.empty()) out += fmt::format(" timestamp=\"{}\"", xml(run.started_at));
    if (!hostname.empty()) out += fmt::format(" hostname=\"{}\"", xml(hostname));
    out += ">\n    <properties>\n";
    property(out, "op", s.op);
    property(out, "implementation", s.impl);
    if (auto it = ops.find(s.op); it != ops.end()) {
      const OpReport& op = *it->second;
      property(out, "seed", std::to_string(op.seed));
      property(out, "reference", op.reference + (op.reference_kind.empty() ? "" : " (" + op.reference_kind + ")"));
      property(out, "baseline", op.baseline);
      property(out, "manifest", op.manifest);
    }
    property(out, "sweep_id", run.sweep_id);
    if (run.shard.count > 1) property(out, "shard", fmt::format("{}/{}", run.shard.index + 1, run.shard.count));
    if (run.repeats > 1) property(out, "repeats", std::to_string(run.repeats));
    property(out, "host", hostname);
    property(out, "tool_version", version);
    property(out, "tool_commit", commit);
    property(out, "command", run.command);
    out += "    </properties>\n";
    for (const TestResult* t : s.tests) write_testcase(out, *t);
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace bb
