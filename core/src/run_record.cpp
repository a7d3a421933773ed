#include "run_record.hpp"

#include <algorithm>

#include <fmt/format.h>


namespace bb {

// {"index", "count"}. Read only through shard_from_json, which checks the keys and their types
// before the macro's reader runs (that reader alone would take 1.5 as 1) and the range after.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ShardInfo, index, count)

namespace {

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

Expected<ShardInfo> shard_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("index") || !j.contains("count") || !j["index"].is_number_integer() || !j["count"].is_number_integer())
    return make_error(fmt::format("{}: 'shard' must be {{index, count}} integers", where));
  const auto s = j.get<ShardInfo>();
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    return make_error(fmt::format("{}: shard {}/{} is out of range", where, s.index, s.count));
  return s;
}

}  // namespace

nlohmann::json op_report_json(const OpReport& op) {
  return {{"op", op.op},
          {"manifest", op.manifest},
          {"seed", op.seed},
          {"reference", op.reference},
          {"reference_kind", op.reference_kind},
          {"baseline", op.baseline},
          {"implementations", op.impls},
          {"cases", op.cases},
          {"warnings", op.warnings},
          {"errors", op.errors}};
}

OpReport op_report_from_json(const nlohmann::json& j) {
  OpReport op;
  op.op = j.value("op", "");
  op.manifest = j.value("manifest", "");
  op.seed = j.value("seed", uint64_t{0});
  op.reference = j.value("reference", "");
  op.reference_kind = j.value("reference_kind", "");
  op.baseline = j.value("baseline", "");
  op.impls = j.value("implementations", std::vector<std::string>{});
  op.cases = j.value("cases", std::size_t{0});
  op.warnings = j.value("warnings", std::vector<std::string>{});
  op.errors = j.value("errors", std::vector<std::string>{});
  return op;
}

nlohmann::json scores_to_json(const Scores& s) {
  nlohmann::json impls = nlohmann::json::array(), ops = nlohmann::json::array(), perf = nlohmann::json::object();
  auto by_mode = [](nlohmann::json& j, const std::vector<std::pair<std::string, double>>& speedups) {
    if (speedups.empty()) return;
    for (const auto& [mode, x] : speedups) j["speedup_by_mode"][mode] = x;
  };
  for (const auto& i : s.impls) {
    impls.push_back({{"op", i.op}, {"impl", i.impl}, {"tests", i.tests}, {"passed", i.passed}, {"failed", i.failed},
                     {"skipped", i.skipped}, {"refused", i.refused}, {"ran", i.ran()}, {"fully_correct", i.fully_correct}, {"speedup", optional_number(i.speedup)},
                     {"speedup_low", optional_number(i.speedup_low)}, {"speedup_high", optional_number(i.speedup_high)},
                     {"significant", i.significant()}});
    by_mode(impls.back(), i.speedup_by_mode);
  }
  for (const auto& o : s.ops) {
    ops.push_back({{"op", o.op}, {"implementations", o.impls}, {"correct_implementations", o.correct_impls},
                   {"geomean_speedup", optional_number(o.geomean_speedup)}});
    by_mode(ops.back(), o.speedup_by_mode);
  }
  for (const auto& [p, share] : s.perf_at) perf[fmt::format("{:g}", p)] = share;
  return {{"tests", s.tests},
          {"passed", s.passed},
          {"failed", s.failed},
          {"skipped", s.skipped},
          {"rule", score_rule_name(s.rule)},
          {"correctness_rate", s.correctness_rate},
          {"geomean_speedup", optional_number(s.geomean_speedup)},
          {"perf_at", perf},
          {"implementations", impls},
          {"ops", ops}};
}

std::string test_key(const TestResult& r) {
  std::string key = r.id.op + "/" + r.id.impl + "/" + r.id.case_id;
  if (r.id.repeat > 0) key += fmt::format("#{}", r.id.repeat);
  return key;
}

std::vector<std::pair<std::string, std::string>> impl_order(const RunRecord& r) {
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& op : r.ops)
    for (const auto& impl : op.impls) order.emplace_back(op.op, impl);
  return order;
}

void rescore(RunRecord& r) {
  r.scores = compute_scores(r.tests, impl_order(r), r.perf_p, r.score_rule);
  const bool unusable = std::any_of(r.ops.begin(), r.ops.end(), [](const OpReport& o) { return !o.errors.empty(); });
  const bool all_passed = std::all_of(r.tests.begin(), r.tests.end(), [&](const TestResult& t) { return passes(t, r.score_rule); });
  r.exit_code = unusable ? 2 : all_passed ? 0 : 1;
}

nlohmann::json to_json(const RunRecord& r) {
  nlohmann::json ops = nlohmann::json::array(), merged = nlohmann::json::array();
  for (const auto& op : r.ops) ops.push_back(op_report_json(op));
  for (const auto& s : r.merged_shards) merged.push_back(s);
  nlohmann::json j = {{"schema_version", r.schema_version},
                      {"tool", "backendbench"},
                      {"command", r.command},
                      {"started_at", r.started_at},
                      {"finished_at", r.finished_at},
                      {"host", r.host},
                      {"options", r.options},
                      {"provenance", r.provenance},
                      {"root", r.root},
                      {"sweep_id", r.sweep_id},
                      {"shard", r.shard},
                      {"merged_shards", merged},
                      {"repeats", r.repeats},
                      {"perf_p", r.perf_p},
                      {"score_rule", score_rule_name(r.score_rule)},
                      {"complete", r.complete},
                      {"interrupted", r.interrupted.empty() ? nlohmann::json() : nlohmann::json(r.interrupted)},
                      {"wall_time_s", r.wall_time},
                      // inside timed regions: wall_time_s / this is the overhead ratio
                      {"measured_time_s", r.measured_time},
                      {"phases", r.phases},
                      {"workers", r.workers},
                      {"host_load", r.host_load},
                      {"exit_code", r.exit_code},
                      {"ops", ops},
                      {"devices", r.devices},
                      {"tests", r.tests},
                      {"scores", scores_to_json(r.scores)}};
  return j;
}

Expected<RunRecord> run_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return make_error(fmt::format("{}: expected a JSON object (a backendbench results file)", where));
  if (j.value("tool", "") != "backendbench")
    return make_error(fmt::format("{}: not a backendbench results file (no \"tool\": \"backendbench\")", where));
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    return make_error(fmt::format("{}: no schema_version", where));
  if (version->get<int>() != kResultsSchemaVersion)
    return make_error(fmt::format("{}: schema_version {}, expected {} (results of another backendbench version; rerun it with this one)",
                                  where, version->get<int>(), kResultsSchemaVersion));
  try {
    RunRecord r;
    r.command = j.value("command", "");
    r.started_at = j.value("started_at", "");
    r.finished_at = j.value("finished_at", "");
    r.host = j.value("host", nlohmann::json::object());
    r.options = j.value("options", nlohmann::json::object());
    r.provenance = j.value("provenance", nlohmann::json::object());
    r.root = j.value("root", "");
    r.sweep_id = j.value("sweep_id", "");
    if (auto it = j.find("shard"); it != j.end()) {
      auto s = shard_from_json(*it, where);
      if (!s) return s.error();
      r.shard = *s;
    }
    for (const auto& m : j.value("merged_shards", nlohmann::json::array())) {
      auto s = shard_from_json(m, where);
      if (!s) return s.error();
      r.merged_shards.push_back(*s);
    }
    r.repeats = j.value("repeats", 1);
    r.perf_p = j.value("perf_p", std::vector<double>{1.0});
    if (auto it = j.find("score_rule"); it != j.end()) {
      auto rule = it->is_string() ? parse_score_rule(it->get<std::string>()) : std::nullopt;
      if (!rule) return make_error(fmt::format("{}: score_rule {}, expected \"standard\" or \"strict\"", where, it->dump()));
      r.score_rule = *rule;
    }
    r.complete = j.value("complete", true);
    if (auto it = j.find("interrupted"); it != j.end() && it->is_string()) r.interrupted = it->get<std::string>();
    r.wall_time = j.value("wall_time_s", 0.0);
    r.measured_time = j.value("measured_time_s", 0.0);
    r.phases = j.value("phases", nlohmann::json::object());
    r.workers = j.value("workers", nlohmann::json::array());
    r.host_load = j.value("host_load", nlohmann::json::object());
    r.exit_code = j.value("exit_code", 0);
    for (const auto& op : j.value("ops", nlohmann::json::array())) r.ops.push_back(op_report_from_json(op));
    r.devices = j.value("devices", nlohmann::json::array());
    const auto tests = j.find("tests");
    if (tests == j.end() || !tests->is_array()) return make_error(fmt::format("{}: no \"tests\" array", where));
    for (const auto& t : *tests) {
      if (!t.is_object() || !t.contains("op") || !t.contains("impl") || !t.contains("case") || !t.contains("verdict"))
        return make_error(fmt::format("{}: a test without op, impl, case and verdict: {}", where, t.dump().substr(0, 200)));
      if (!parse_verdict(t.value("verdict", "")))
        return make_error(fmt::format("{}: unknown verdict '{}' in {}", where, t.value("verdict", ""), t.dump().substr(0, 200)));
      r.tests.push_back(t.get<TestResult>());
    }
    const int exit_code = r.exit_code;
    rescore(r);
    if (r.complete) r.exit_code = exit_code;  // as the run decided (a command error is 2 too)
    return r;
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: malformed results: {}", where, e.what()));
  }
}

}  // namespace bb
