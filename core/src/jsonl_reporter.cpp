// results.jsonl: one JSON line per event, flushed as each happens, so a killed run keeps every
// test that finished (load_run reads it back).
#include <cstdio>

#include <fmt/format.h>

#include "reporter.hpp"
#include "run_record.hpp"

namespace bb {

namespace {

class JsonlReporter final : public Reporter {
 public:
  explicit JsonlReporter(const std::filesystem::path& file) : file_(std::fopen(file.c_str(), "w")) {
    if (!file_) fmt::print(stderr, "error: {}: cannot write the results stream\n", file.string());
  }
  ~JsonlReporter() override {
    if (file_) std::fclose(file_);
  }
  void run_started(const RunInfo& info) override {
    write({{"event", "run_started"}, {"tool", "backendbench"}, {"schema_version", kResultsSchemaVersion}, {"command", info.command},
           {"started_at", info.started_at}, {"host", info.host}, {"options", info.options}, {"root", info.root.string()}});
  }
  void sweep_planned(const RunInfo& info, std::size_t total) override {
    write({{"event", "sweep"}, {"provenance", info.provenance}, {"sweep_id", info.sweep_id},
           {"shard", {{"index", info.shard_index}, {"count", info.shard_count}}}, {"repeats", info.repeats},
           {"perf_p", info.perf_p}, {"planned_tests", total}});
  }
  void op_planned(const OpReport& op) override {
    auto j = op_report_json(op);
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
    write({{"event", "run_finished"}, {"exit_code", s.exit_code}, {"finished_at", s.finished_at}, {"wall_time_s", s.wall_time},
           {"measured_time_s", s.measured_time}, {"phases", s.phases},
           {"workers", s.workers}, {"scores", scores_to_json(s.scores)}});
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

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(const std::filesystem::path& file) { return std::make_unique<JsonlReporter>(file); }

}  // namespace bb
