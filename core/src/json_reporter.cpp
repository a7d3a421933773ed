// results.jsonl (streamed) and results.json (whole run).
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "reporter.hpp"

namespace bb {

namespace {

constexpr int kSchemaVersion = 1;

nlohmann::json op_json(const OpReport& op) {
  return {{"op", op.op},           {"manifest", op.manifest},   {"seed", op.seed},         {"reference", op.reference},
          {"reference_kind", op.reference_kind}, {"baseline", op.baseline}, {"implementations", op.impls},
          {"cases", op.cases},     {"warnings", op.warnings},   {"errors", op.errors}};
}

class JsonlReporter final : public Reporter {
 public:
  explicit JsonlReporter(const std::filesystem::path& file) : file_(std::fopen(file.c_str(), "w")) {
    if (!file_) fmt::print(stderr, "error: {}: cannot write the results stream\n", file.string());
  }
  ~JsonlReporter() override {
    if (file_) std::fclose(file_);
  }
  void run_started(const RunInfo& info) override {
    write({{"event", "run_started"}, {"schema_version", kSchemaVersion}, {"command", info.command},
           {"started_at", info.started_at}, {"host", info.host}, {"options", info.options}});
  }
  void op_planned(const OpReport& op) override {
    auto j = op_json(op);
    j["event"] = "op";
    write(j);
  }
  void device_described(const nlohmann::json& d) override {
    auto j = d;
    j["event"] = "device";
    write(j);
  }
  void test_finished(const TestResult& r, std::size_t, std::size_t) override {
    nlohmann::json j = r;
    j["event"] = "test";
    write(j);
  }
  void run_finished(const RunSummary& s) override {
    write({{"event", "run_finished"}, {"exit_code", s.exit_code}, {"finished_at", s.finished_at}, {"scores", scores_to_json(s.scores)}});
  }

 private:
  void write(const nlohmann::json& j) {
    if (!file_) return;
    const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);  // in the kernel's hands now: survives the process being killed
  }
  FILE* file_;
};

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(std::filesystem::path file) : path_(std::move(file)) {}
  void run_started(const RunInfo& info) override {
    doc_ = {{"schema_version", kSchemaVersion},
            {"tool", "backendbench"},
            {"command", info.command},
            {"started_at", info.started_at},
            {"host", info.host},
            {"options", info.options},
            {"root", info.root.string()}};
  }
  void op_planned(const OpReport& op) override { ops_.push_back(op_json(op)); }
  void device_described(const nlohmann::json& d) override { devices_.push_back(d); }
  void run_finished(const RunSummary& s) override {
    doc_["finished_at"] = s.finished_at;
    doc_["wall_time_s"] = s.wall_time;
    doc_["measured_time_s"] = s.measured_time;  // inside timed regions: wall_time_s / this is the overhead ratio
    doc_["exit_code"] = s.exit_code;
    doc_["ops"] = ops_;
    doc_["devices"] = devices_;
    doc_["tests"] = s.results;
    doc_["scores"] = scores_to_json(s.scores);
    const auto tmp = path_.string() + ".tmp";
    {
      std::ofstream out(tmp);
      out << doc_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      if (!out) {
        fmt::print(stderr, "error: {}: cannot write results\n", tmp);
        return;
      }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path_, ec);
    if (ec) fmt::print(stderr, "error: {}: {}\n", path_.string(), ec.message());
  }

 private:
  std::filesystem::path path_;
  nlohmann::json doc_;
  nlohmann::json ops_ = nlohmann::json::array();
  nlohmann::json devices_ = nlohmann::json::array();
};

}  // namespace

nlohmann::json scores_to_json(const Scores& s) {
  nlohmann::json impls = nlohmann::json::array(), ops = nlohmann::json::array(), perf = nlohmann::json::object();
  for (const auto& i : s.impls)
    impls.push_back({{"op", i.op}, {"impl", i.impl}, {"tests", i.tests}, {"passed", i.passed}, {"failed", i.failed},
                     {"skipped", i.skipped}, {"ran", i.ran()}, {"fully_correct", i.fully_correct},
                     {"speedup", i.speedup ? nlohmann::json(*i.speedup) : nlohmann::json()}});
  for (const auto& o : s.ops)
    ops.push_back({{"op", o.op}, {"implementations", o.impls}, {"correct_implementations", o.correct_impls},
                   {"geomean_speedup", o.geomean_speedup ? nlohmann::json(*o.geomean_speedup) : nlohmann::json()}});
  for (const auto& [p, share] : s.perf_at) perf[fmt::format("{:g}", p)] = share;
  return {{"tests", s.tests},
          {"passed", s.passed},
          {"failed", s.failed},
          {"skipped", s.skipped},
          {"correctness_rate", s.correctness_rate},
          {"geomean_speedup", s.geomean_speedup ? nlohmann::json(*s.geomean_speedup) : nlohmann::json()},
          {"perf_at", perf},
          {"implementations", impls},
          {"ops", ops}};
}

std::unique_ptr<Reporter> make_jsonl_reporter(const std::filesystem::path& file) { return std::make_unique<JsonlReporter>(file); }
std::unique_ptr<Reporter> make_json_reporter(const std::filesystem::path& file) { return std::make_unique<JsonReporter>(file); }

}  // namespace bb
