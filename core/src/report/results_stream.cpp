#include "report/results_stream.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

namespace bb {

namespace {

class StreamWriter final : public Reporter {
 public:
  explicit StreamWriter(const std::filesystem::path& file) : file_(std::fopen(file.c_str(), "we")) {
    if (!file_) fmt::print(stderr, "error: {}: cannot write the results stream\n", file.string());
  }
  ~StreamWriter() override {
    if (file_) std::fclose(file_);
  }
  void run_started(const RunRecord& run) override {
    write({{"event", "run_started"}, {"tool", "backendbench"}, {"schema_version", kResultsSchemaVersion}, {"command", run.command},
           {"started_at", run.started_at}, {"host", run.host}, {"options", run.options}, {"root", run.root}});
  }
  void sweep_planned(const RunRecord& run, std::size_t total) override {
    write({{"event", "sweep"}, {"provenance", run.provenance}, {"sweep_id", run.sweep_id},
           {"shard", {{"index", run.shard.index}, {"count", run.shard.count}}}, {"repeats", run.repeats},
           {"perf_p", run.perf_p}, {"score_rule", score_rule_name(run.score_rule)}, {"planned_tests", total}});
  }
  void op_planned(const OpReport& op) override {
    auto j = op_report_json(op);
    j["event"] = "op";
    write(j);
  }
  void device_described(const DeviceKind& d) override {
    auto j = d.reply;
    j["event"] = "device";
    write(j);
  }
  void test_finished(const TestResult& r, std::size_t, std::size_t) override {
    nlohmann::json j = r;
    j["event"] = "test";
    write(j);
  }
  void run_finished(const RunRecord& s) override {
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

std::unique_ptr<Reporter> make_results_stream_writer(const std::filesystem::path& file) { return std::make_unique<StreamWriter>(file); }

// A killed run's last line may be torn: it is dropped; a bad line before the last is an error.
Expected<RunRecord> read_results_stream(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return make_error(fmt::format("{}: cannot read", file.string()));
  nlohmann::json doc = {{"tool", "backendbench"}, {"tests", nlohmann::json::array()}, {"ops", nlohmann::json::array()},
                        {"devices", nlohmann::json::array()}, {"complete", false}};
  bool started = false;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json e;
    try {
      e = nlohmann::json::parse(line);
    } catch (const std::exception& ex) {
      if (in.peek() == EOF) break;  // a torn last line: the run was killed while writing it
      return make_error(fmt::format("{}:{}: not JSON ({})", file.string(), line_no, ex.what()));
    }
    const std::string event = e.value("event", "");
    e.erase("event");
    if (event == "run_started" || event == "sweep") {
      started = started || event == "run_started";
      for (auto& [k, v] : e.items()) doc[k] = v;
    } else if (event == "op") {
      doc["ops"].push_back(e);
    } else if (event == "device") {
      doc["devices"].push_back(e);
    } else if (event == "test") {
      doc["tests"].push_back(e);
    } else if (event == "run_finished") {
      doc["complete"] = true;  // unless the line says otherwise (an interrupted run)
      for (auto& [k, v] : e.items())
        if (k != "scores") doc[k] = v;
    }
  }
  if (!started) return make_error(fmt::format("{}: no run_started line (not a backendbench results stream)", file.string()));
  return run_from_json(doc, file.string());
}

}  // namespace bb
