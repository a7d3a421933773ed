#include "results.hpp"

#include <cmath>
#include <limits>

namespace bb {

namespace {
template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
// JSON has no NaN or infinity: nlohmann writes them as null, and null reads back as NaN here.
double number(const nlohmann::json& j, const char* key, double def = 0.0) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (it->is_number()) return it->get<double>();
  return std::numeric_limits<double>::quiet_NaN();
}

template <typename T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->get<T>();
}
}  // namespace

void to_json(nlohmann::json& j, const ErrorFigures& e) {
  j = {{"output", e.output}, {"max_abs_error", e.max_abs_error}, {"max_rel_error", e.max_rel_error}, {"tolerance_used", e.tolerance_used}};
}

void from_json(const nlohmann::json& j, ErrorFigures& e) {
  e.output = j.value("output", "");
  e.max_abs_error = number(j, "max_abs_error");
  e.max_rel_error = number(j, "max_rel_error");
  e.tolerance_used = number(j, "tolerance_used");
  if (std::isnan(e.tolerance_used)) e.tolerance_used = std::numeric_limits<double>::infinity();  // null: infinite
}

void to_json(nlohmann::json& j, const TestResult& r) {
  const TestId& id = r.id;
  j = nlohmann::json{{"op", id.op},         {"impl", id.impl},   {"case", id.case_id}, {"kind", id.kind},
                     {"mode", id.mode},     {"device", id.device}, {"device_index", id.device_index}, {"repeat", id.repeat},
                     {"verdict", verdict_name(r.outcome.verdict)}, {"message", r.outcome.message},
                     {"duration_s", r.phases.duration}};
  if (r.outcome.refused) j["refused"] = true;
  if (!id.variant.empty()) j["variant"] = id.variant;
  if (r.outcome.zeros_pass) j["zeros_would_pass"] = true;
  if (!id.shapes.empty()) j["shapes"] = id.shapes;
  if (r.outcome.errors) j["errors"] = *r.outcome.errors;
  if (!r.outcome.crash.is_null()) j["crash"] = r.outcome.crash;
  if (!r.phases.seconds.empty()) j["phases"] = r.phases.seconds;
  if (r.output.bytes) {
    j["output"] = r.output.text;
    j["output_bytes"] = r.output.bytes;
  }
  if (r.outcome.mismatch) {
    const auto& m = *r.outcome.mismatch;
    j["mismatch"] = {{"output", m.output},     {"count", m.count},         {"total", m.total},
                     {"unwritten", m.unwritten}, {"max_abs_error", m.max_abs_error}, {"max_rel_error", m.max_rel_error},
                     {"first_index", m.first_index}, {"actual", m.actual},  {"expected", m.expected},
                     {"atol", m.atol},         {"rtol", m.rtol}};
  }
  const Performance& p = r.performance;
  if (p.timing) {
    const auto& t = *p.timing;
    const auto& s = t.stats;
    j["timing"] = {{"mode", t.mode},       {"samples", s.samples}, {"median_s", s.median}, {"min_s", s.min},
                   {"max_s", s.max},       {"mean_s", s.mean},     {"q1_s", s.q1},         {"q3_s", s.q3},
                   {"iqr_s", s.iqr},       {"stdev_s", s.stdev},   {"rel_stdev", s.rel_stdev},
                   {"host_median_s", t.host.median}, {"host_mean_s", t.host.mean}, {"host_min_s", t.host.min},
                   {"stop", t.stop},       {"batch", t.batch},     {"warmup_calls", t.warmup_calls},
                   {"wall_time_s", t.wall_time}, {"measured_time_s", t.measured_time}, {"baseline_measured_time_s", t.baseline_measured_time}, {"throttled_samples", t.throttled},
                   {"sm_clock_mhz", t.clock_mhz}, {"blocking_kernel", t.blocking}, {"notes", t.notes}};
    if (!t.eviction.empty()) j["timing"]["eviction"] = t.eviction;
    if (t.samples_per_sync > 1) j["timing"]["samples_per_sync"] = t.samples_per_sync;
    if (!t.fresh_inputs.empty()) j["timing"]["fresh_inputs"] = t.fresh_inputs;
    if (t.pinned_cpu >= 0) j["timing"]["pinned_cpu"] = t.pinned_cpu;
    if (t.event_cost > 0) {
      j["timing"]["event_cost_s"] = t.event_cost;
      j["timing"]["kernel_median_s"] = t.kernel_median();
    }
  }
  put(j, "baseline_median_s", p.baseline_median);
  put(j, "speedup", p.speedup);
  put(j, "speedup_low", p.speedup_low);
  put(j, "speedup_high", p.speedup_high);
  put(j, "speedup_confidence", p.speedup_confidence);
  put(j, "speedup_pairs", p.speedup_pairs);
  put(j, "speedup_resolution", p.speedup_resolution);
  put(j, "flops", id.flops);
  put(j, "bytes", id.bytes);
  put(j, "tflops", p.tflops);
  put(j, "gbps", p.gbps);
  put(j, "peak_bandwidth_pct", p.peak_pct);
  put(j, "peak_bandwidth_pct_theoretical", p.peak_pct_theoretical);
  if (p.roofline_pct) j["roofline"] = {{"pct", *p.roofline_pct}, {"bound", p.roofline_bound}, {"compute", p.roofline_compute}};
}

void from_json(const nlohmann::json& j, TestResult& r) {
  TestId& id = r.id;
  id.op = j.value("op", "");
  id.impl = j.value("impl", "");
  id.case_id = j.value("case", "");
  id.kind = j.value("kind", "");
  id.mode = j.value("mode", "fwd");  // a run from before modes: forward only
  id.device = j.value("device", "cpu");
  id.device_index = j.value("device_index", 0);
  id.repeat = j.value("repeat", 0);
  id.variant = j.value("variant", "");
  id.shapes = j.value("shapes", "");
  get(j, "flops", id.flops);
  get(j, "bytes", id.bytes);
  r.outcome.verdict = parse_verdict(j.value("verdict", "ERROR")).value_or(Verdict::error);
  r.outcome.message = j.value("message", "");
  r.outcome.refused = r.outcome.verdict == Verdict::skipped && j.value("refused", false);
  r.outcome.zeros_pass = j.value("zeros_would_pass", false);
  if (auto it = j.find("crash"); it != j.end() && it->is_object()) r.outcome.crash = *it;
  r.phases.duration = number(j, "duration_s");
  r.output.text = j.value("output", "");
  r.output.bytes = j.value("output_bytes", std::size_t{0});
  if (auto it = j.find("phases"); it != j.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_number()) r.phases.seconds[k] = v.get<double>();
  if (auto it = j.find("errors"); it != j.end() && it->is_object()) r.outcome.errors = it->get<ErrorFigures>();
  if (auto it = j.find("mismatch"); it != j.end()) {
    Mismatch m;
    m.output = it->value("output", "");
    m.count = it->value("count", int64_t{0});
    m.total = it->value("total", int64_t{0});
    m.unwritten = it->value("unwritten", int64_t{0});
    m.max_abs_error = number(*it, "max_abs_error");
    m.max_rel_error = number(*it, "max_rel_error");
    m.first_index = it->value("first_index", "");
    m.actual = number(*it, "actual");
    m.expected = number(*it, "expected");
    m.atol = number(*it, "atol");
    m.rtol = number(*it, "rtol");
    r.outcome.mismatch = m;
  }
  if (auto it = j.find("timing"); it != j.end()) {
    Timing t;
    auto& s = t.stats;
    s.samples = it->value("samples", std::size_t{0});
    s.median = number(*it, "median_s");
    s.min = number(*it, "min_s");
    s.max = number(*it, "max_s");
    s.mean = number(*it, "mean_s");
    s.q1 = number(*it, "q1_s");
    s.q3 = number(*it, "q3_s");
    s.iqr = number(*it, "iqr_s");
    s.stdev = number(*it, "stdev_s");
    s.rel_stdev = number(*it, "rel_stdev");
    t.mode = it->value("mode", "cold");
    t.host.samples = s.samples;
    t.host.median = number(*it, "host_median_s");
    t.host.mean = number(*it, "host_mean_s");
    t.host.min = number(*it, "host_min_s");
    t.stop = it->value("stop", "");
    t.batch = it->value("batch", std::size_t{1});
    t.warmup_calls = it->value("warmup_calls", std::size_t{0});
    t.wall_time = number(*it, "wall_time_s");
    t.measured_time = number(*it, "measured_time_s");
    if (it->contains("baseline_measured_time_s")) t.baseline_measured_time = number(*it, "baseline_measured_time_s");
    t.throttled = it->value("throttled_samples", std::size_t{0});
    t.clock_mhz = number(*it, "sm_clock_mhz");
    t.blocking = it->value("blocking_kernel", false);
    t.eviction = it->value("eviction", "");
    t.samples_per_sync = it->value("samples_per_sync", std::size_t{1});
    t.fresh_inputs = it->value("fresh_inputs", "");
    t.pinned_cpu = it->value("pinned_cpu", -1);
    if (it->contains("event_cost_s")) t.event_cost = number(*it, "event_cost_s");
    t.notes = it->value("notes", std::vector<std::string>{});
    r.performance.timing = t;
  }
  Performance& p = r.performance;
  get(j, "baseline_median_s", p.baseline_median);
  get(j, "speedup", p.speedup);
  get(j, "speedup_low", p.speedup_low);
  get(j, "speedup_high", p.speedup_high);
  get(j, "speedup_confidence", p.speedup_confidence);
  get(j, "speedup_pairs", p.speedup_pairs);
  get(j, "speedup_resolution", p.speedup_resolution);
  get(j, "tflops", p.tflops);
  get(j, "gbps", p.gbps);
  get(j, "peak_bandwidth_pct", p.peak_pct);
  get(j, "peak_bandwidth_pct_theoretical", p.peak_pct_theoretical);
  if (auto rl = j.find("roofline"); rl != j.end() && rl->is_object() && rl->contains("pct") && (*rl)["pct"].is_number()) {
    p.roofline_pct = (*rl)["pct"].get<double>();
    p.roofline_bound = rl->value("bound", "");
    p.roofline_compute = rl->value("compute", "");
  }
}

}  // namespace bb
