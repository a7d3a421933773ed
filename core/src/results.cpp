#include "results.hpp"

namespace bb {

namespace {
constexpr const char* kNames[] = {"PASS",    "FAIL",         "ERROR",         "CRASH",            "TIMEOUT",
                                  "UNWRITTEN", "INPUT_MUTATED", "OUT_OF_BOUNDS", "NONDETERMINISTIC", "SKIPPED"};

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->get<T>();
}
}  // namespace

const char* verdict_name(Verdict v) { return kNames[static_cast<int>(v)]; }

std::optional<Verdict> parse_verdict(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (name == kNames[i]) return static_cast<Verdict>(i);
  return std::nullopt;
}

void to_json(nlohmann::json& j, const TestResult& r) {
  j = nlohmann::json{{"op", r.op},       {"impl", r.impl},       {"case", r.case_id},   {"kind", r.kind},
                     {"device", r.device}, {"verdict", verdict_name(r.verdict)}, {"message", r.message},
                     {"duration_s", r.duration}};
  if (r.mismatch) {
    const auto& m = *r.mismatch;
    j["mismatch"] = {{"output", m.output},     {"count", m.count},         {"total", m.total},
                     {"unwritten", m.unwritten}, {"max_abs_error", m.max_abs_error}, {"max_rel_error", m.max_rel_error},
                     {"first_index", m.first_index}, {"actual", m.actual},  {"expected", m.expected},
                     {"atol", m.atol},         {"rtol", m.rtol}};
  }
  if (r.timing) {
    const auto& t = *r.timing;
    const auto& s = t.stats;
    j["timing"] = {{"samples", s.samples}, {"median_s", s.median}, {"min_s", s.min},     {"max_s", s.max},
                   {"mean_s", s.mean},     {"q1_s", s.q1},         {"q3_s", s.q3},       {"iqr_s", s.iqr},
                   {"stdev_s", s.stdev},   {"rel_stdev", s.rel_stdev}, {"stop", t.stop}, {"batch", t.batch},
                   {"wall_time_s", t.wall_time}};
  }
  put(j, "baseline_median_s", r.baseline_median);
  put(j, "speedup", r.speedup);
  put(j, "flops", r.flops);
  put(j, "bytes", r.bytes);
  put(j, "tflops", r.tflops);
  put(j, "gbps", r.gbps);
}

void from_json(const nlohmann::json& j, TestResult& r) {
  r.op = j.value("op", "");
  r.impl = j.value("impl", "");
  r.case_id = j.value("case", "");
  r.kind = j.value("kind", "");
  r.device = j.value("device", "cpu");
  r.verdict = parse_verdict(j.value("verdict", "ERROR")).value_or(Verdict::error);
  r.message = j.value("message", "");
  r.duration = j.value("duration_s", 0.0);
  if (auto it = j.find("mismatch"); it != j.end()) {
    Mismatch m;
    m.output = it->value("output", "");
    m.count = it->value("count", int64_t{0});
    m.total = it->value("total", int64_t{0});
    m.unwritten = it->value("unwritten", int64_t{0});
    m.max_abs_error = it->value("max_abs_error", 0.0);
    m.max_rel_error = it->value("max_rel_error", 0.0);
    m.first_index = it->value("first_index", "");
    m.actual = it->value("actual", 0.0);
    m.expected = it->value("expected", 0.0);
    m.atol = it->value("atol", 0.0);
    m.rtol = it->value("rtol", 0.0);
    r.mismatch = m;
  }
  if (auto it = j.find("timing"); it != j.end()) {
    Timing t;
    auto& s = t.stats;
    s.samples = it->value("samples", std::size_t{0});
    s.median = it->value("median_s", 0.0);
    s.min = it->value("min_s", 0.0);
    s.max = it->value("max_s", 0.0);
    s.mean = it->value("mean_s", 0.0);
    s.q1 = it->value("q1_s", 0.0);
    s.q3 = it->value("q3_s", 0.0);
    s.iqr = it->value("iqr_s", 0.0);
    s.stdev = it->value("stdev_s", 0.0);
    s.rel_stdev = it->value("rel_stdev", 0.0);
    t.stop = it->value("stop", "");
    t.batch = it->value("batch", std::size_t{1});
    t.wall_time = it->value("wall_time_s", 0.0);
    r.timing = t;
  }
  get(j, "baseline_median_s", r.baseline_median);
  get(j, "speedup", r.speedup);
  get(j, "flops", r.flops);
  get(j, "bytes", r.bytes);
  get(j, "tflops", r.tflops);
  get(j, "gbps", r.gbps);
}

}  // namespace bb
