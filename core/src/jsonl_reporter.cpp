// results.jsonl: one JSON line per event, flushed as each happens, so a killed run keeps every
// test that finished (load_run reads it back).
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

#include "reporter.hpp"
#include "run_record.hpp"

namespace bb {

namespace {

class JsonlReporter final : public Reporter {
 public:
  explicit JsonlReporter(const std::filesystem::path& file) : file_(std::fopen(file.c_str(), "we")) {
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
    write({{"event", "run_finished"}, {"exit_code", s.exit_code}, {"complete", s.interrupted.empty()},
           {"interrupted", s.interrupted.empty() ? nlohmann::json() : nlohmann::json(s.interrupted)},
           {"finished_at", s.finished_at}, {"wall_time_s", s.wall_time},
           {"measured_time_s", s.measured_time}, {"phases", s.phases},
           {"workers", s.workers}, {"host_load", s.host_load}, {"scores", scores_to_json(s.scores)}});
  }

 private:
  // A line goes to the kernel in one write(2) (a write to a regular file is not cut short by a
  // signal, SIGKILL included), so a killed run never leaves a torn last line; stdio would split
  // a line longer than its buffer into several.
  void write(const nlohmann::json& j) {
    if (!file_) return;
    const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const int fd = fileno(file_);
    std::size_t off = 0;
    while (off < line.size()) {
      const ssize_t n = ::write(fd, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  FILE* file_;
};

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(const std::filesystem::path& file) { return std::make_unique<JsonlReporter>(file); }

}  // namespace bb
