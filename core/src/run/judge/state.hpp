// One test's state as its steps share it (judge.hpp): the request, its workers and limits,
// the result being made, each worker's standing, the timed blocks so far; and the bookkeeping
// every step uses (phases, the one way a test ends: finish(), a worker's request, traces). The
// steps build on it, a room each: reference_steps.hpp (inputs, prepare, the reference),
// device_checker.hpp (the checker's conversation on the device), check_steps.hpp (the checks),
// timing_steps.hpp (the timed blocks), and judge.cpp's Judge runs them in order.
#pragma once

#include "run/judge_request.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/device_runtimes.hpp"
#include "host_buffer.hpp"
#include "init.hpp"
#include "measure/clock_audit.hpp"
#include "measure/cpu_pairing.hpp"
#include "measure/paired_timer.hpp"
#include "measure/run_queue.hpp"
#include "measure/timing_of.hpp"
#include "parallel.hpp"
#include "protocol/case_json.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/blob_cache.hpp"
#include "run/device_check.hpp"
#include "run/fresh_inputs.hpp"
#include "run/judge/device_activity.hpp"
#include "run/output_checks.hpp"
#include "run/workers/sandbox_off.hpp"
#include "trace.hpp"

namespace bb::judge {

constexpr std::size_t kOutputCap = 16 * 1024;
// Checked calls on other inputs, placed at secret points among the timed blocks: the first on
// fresh values, the others on the case's inputs with one element in kSparseEvery changed, at
// least one (a cache keyed by sampled elements takes them for the case's). kCheckedCalls among the blocks
// every measurement takes (kMinPairs), then one in every further kMinPairs blocks.
constexpr int kCheckedCalls = 4;
constexpr uint64_t kSparseEvery = 4096;

class TestState {
 protected:
  using Clock = std::chrono::steady_clock;
  // The identity is the host's, made once (job_runner.cpp's test_identity); the case is the plan's.
  TestState(const TestRequest& req, const TestWorkers& w, const DriverLimits& limits)
      : req_(req), w_(w), limits_(limits), c_(&req.test_case) {
    r_.id = req.id;
  }

  // ---- bookkeeping
  void mark(const char* phase) {
    const auto now = Clock::now();
    r_.phases.seconds[phase] += std::chrono::duration<double>(now - phase_start_).count();
    phase_start_ = now;
  }
  TestResult finish(Verdict v, std::string message) {
    mark(phase_);
    r_.outcome.verdict = v;
    r_.outcome.message = std::move(message);
    r_.outcome.refused = false;
    r_.phases.duration = std::chrono::duration<double>(Clock::now() - started_).count();
    return r_;
  }
  // SKIPPED by the implementation's own word (Outcome::refused).
  TestResult refusal(std::string message) {
    finish(Verdict::skipped, std::move(message));
    r_.outcome.refused = true;
    return r_;
  }
  void enter(const char* phase) {
    mark(phase_);
    phase_ = phase;
  }
  void keep_output(ExecOutcome& out) {
    r_.output.bytes += out.output_bytes;
    if (out.output.empty()) return;
    // The test's head and its tail, as each request's capture keeps them: the last words of a
    // test (before a crash, say) are what a reader looks for.
    r_.output.text += out.output;
    if (r_.output.text.size() > kOutputCap + 128) {
      const std::size_t half = kOutputCap / 2;
      const std::string marker = "\n[... output of this test left out ...]\n";
      if (r_.output.text.find(marker) == std::string::npos || r_.output.text.find(marker) > half)
        r_.output.text = r_.output.text.substr(0, half) + marker + r_.output.text.substr(r_.output.text.size() - half);
      else  // the head is kept already: keep it, and the newest tail
        r_.output.text = r_.output.text.substr(0, half + marker.size()) + r_.output.text.substr(r_.output.text.size() - half);
    }
  }

  // A request to one worker, traced (BACKENDBENCH_TRACE_BLOCKS) with its round trip and the
  // worker's own account of its steps.
  ExecOutcome exec(Executor& e, const char* side, const nlohmann::json& request, double timeout, int fd = -1) {
    ExecOutcome out = e.execute(request, timeout, fd);
    if (out.reply.is_object())  // a Python implementation's just-in-time compilations: apart from every timed region
      if (auto it = out.reply.find("compile_s"); it != out.reply.end() && it->is_number()) r_.phases.seconds["compile_s"] += it->get<double>();
    if (tracing())
      trace({{"side", side}, {"cmd", request.value("cmd", "")}, {"round_trip_s", out.seconds},
             {"worker_steps", out.reply.is_object() ? out.reply.value("steps", nlohmann::json::object()) : nlohmann::json::object()}});
    return out;
  }
  // Host-side work of the test, traced as `what` with its duration.
  void trace_host(const char* what, Clock::time_point since) const {
    if (tracing()) trace({{"side", "host"}, {"cmd", what}, {"round_trip_s", std::chrono::duration<double>(Clock::now() - since).count()}});
  }

  // A request to the implementation's worker; a worker that died or hung is the test's verdict.
  Expected<ExecOutcome> ask_impl(const nlohmann::json& request, double timeout, int fd = -1) {
    use_impl_side();
    ExecOutcome out = exec(*w_.impl, "impl", request, timeout, fd);
    keep_output(out);
    if (out.status != ExecOutcome::Status::ok) {
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      failed_ = finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout, out.detail);
      return make_error("the implementation's worker: " + out.detail);
    }
    if (out.reply.value("fatal", false)) impl_.fatal = true;
    return out;
  }
  // Only one side of a pair runs at a time: the other is frozen, every process of it. Before the
  // test's timing the baseline's worker is left alone: it may still be starting (its warm-up
  // is settled by TestWorkers::quiet, which a frozen worker would never answer).
  void use_impl_side() {
    if (timing_ && w_.baseline && w_.baseline != w_.impl) w_.baseline->freeze(true);
    w_.impl->freeze(false);
  }
  void use_baseline_side() {
    w_.impl->freeze(true);
    w_.baseline->freeze(false);
  }
  // A CPU pairing's end (cpu_pairing.hpp): both sides back on every CPU; the CPU it ended pinned to.
  int end_pairing() {
    if (!pairing_.pinned()) return pairing_.end(WorkerTasks{}, nullptr);  // nothing pinned: no tasks to read
    const WorkerTasks impl = w_.impl->tasks(), base = w_.baseline ? w_.baseline->tasks() : WorkerTasks{};
    return pairing_.end(impl, w_.baseline ? &base : nullptr);
  }
  TestResult call_failure(const CallReply& c, const std::string& prefix) {
    if (c.sticky) return finish(Verdict::crash, prefix + c.error);
    if (!c.left_behind.empty()) return finish(Verdict::error, prefix + "the call " + c.left_behind);
    if (c.outside) return finish(Verdict::error, prefix + kOutsideStream);
    return finish(Verdict::error, prefix + c.error);
  }
  // The case, whichever implementation is under test: the whole of it (its .npy files' folder too).
  std::string inputs_key() const {
    return fmt::format("inputs|{}|{}|{}", req_.data_dir.string(), req_.op, to_json(req_.test_case).dump());
  }
  // The reference's buffers for the case's inputs: one reference function on one device.
  std::string expected_key() const {
    return fmt::format("expected|{}|{}|{}|{}|{}", inputs_key(), req_.reference.library, static_cast<int>(req_.reference.kind),
                       static_cast<int>(req_.reference.pass), req_.reference_device);
  }

  PrepareRequest prepare_request(const char* role, const Target& t, const std::string& device) const {
    PrepareRequest p;
    p.role = role;
    p.op = req_.op;
    p.test_case = req_.test_case;
    p.target = t;
    p.device = device;
    p.device_index = req_.device_index;
    return p;
  }

  // The host's judgement of the test's first call, its error figures kept for the result.
  std::optional<Judgement> judge_first_call(const SealedBlob& got, const SealedBlob& inputs, const SealedBlob& want) {
    ErrorFigures figures;
    auto j = judge_call(*c_, CallBuffersView(*c_, got), inputs, CallBuffersView(*c_, want), &figures);
    if (!figures.output.empty()) r_.outcome.errors = figures;
    return j;
  }

  // ---- timing
  // The buffers after a call (a block's last, or a checked call): its outputs must be the
  // reference's (`expected`), its inputs as they were (`inputs`), its guards whole. "" when so.
  std::string check_buffers(UniqueFd fd, const SealedBlob& inputs, const SealedBlob& expected) {
    auto blob = SealedBlob::adopt(std::move(fd), buffers_layout(*c_).total);
    if (!blob) return "its buffers: " + blob.error().message;
    if (auto j = judge_call(*c_, CallBuffersView(*c_, *blob), inputs, CallBuffersView(*c_, expected))) return j->message;
    return "";
  }

  // Inputs as a worker makes them on its device: what inputs_blob makes on the host for (salt,
  // secret, sparse), seed for seed and, through the shared generators, bit for bit (salt "": the
  // case's). nullopt where an input cannot be made there (.npy).
  std::optional<std::vector<InputRecipe>> input_recipes(const std::string& salt, uint64_t secret, bool sparse) const {
    std::vector<InputRecipe> recipes;
    for (const auto& t : c_->inputs) {
      const uint64_t seed = salt.empty() ? mix_seed(c_->seed, t.name) : mix_seed(secret, salt + ":" + t.name);
      auto in = input_recipe(t, seed);
      if (!in) return std::nullopt;
      const auto n = static_cast<uint64_t>(t.numel());
      in->scatter = sparse ? std::max<uint64_t>(1, n / kSparseEvery) : 0;
      recipes.push_back(*in);
    }
    return recipes;
  }
  bool checker_ok(const ExecOutcome& out) {
    if (out.status != ExecOutcome::Status::ok) {
      checker_.fatal = true;
      return false;
    }
    return out.reply.value("error", "").empty();
  }

  // A call's inputs (inputs_layout) out of its buffers (buffers_layout: each between its guards).
  Expected<SealedBlob> inputs_of_buffers(const SealedBlob& buffers) const {
    const BlobLayout from = buffers_layout(*c_), to = inputs_layout(*c_);
    if (buffers.size() < from.total) return make_error("its buffers are too small");
    return SealedBlob::create(to.total, [&](uint8_t* p) {
      for (std::size_t i = 0; i < c_->inputs.size(); ++i)
        std::memcpy(p + to.offsets[i], buffers.data() + from.offsets[i] + HostBuffer::kGuardBytes, c_->inputs[i].nbytes());
    }, "bb-fresh-inputs");
  }

  // BACKENDBENCH_TRACE_BLOCKS (trace.hpp): this test's lines carry its implementation and case.
  void trace(nlohmann::json line) const {
    if (!tracing()) return;
    line["impl"] = req_.impl.library;
    line["case"] = c_ ? c_->id : "";
    line["slot"] = fmt::format("{}:{}", req_.device, req_.device_index);
    trace_line(std::move(line));
  }
  void trace_block(bool baseline, const Measurement& m, double host_seconds, double waited, double check_seconds, double freeze_seconds,
                   const nlohmann::json& steps) const {
    if (!tracing()) return;
    trace({{"side", baseline ? "baseline" : "impl"}, {"cmd", "block"},
           {"block", (baseline ? base_blocks_ : impl_blocks_).size()},
           {"median_s", m.stats.median}, {"samples", m.samples.size()}, {"batch", m.batch},
           {"host_s", host_seconds}, {"foreign_wait_s", waited}, {"host_wait_s", host_wait_}, {"check_s", check_seconds}, {"freeze_s", freeze_seconds}, {"measured_s", m.measured_time},
           {"clock_mhz", m.clock_mhz}, {"worker_steps", steps}, {"host_median_s", m.host.median}, {"paced_samples", m.paced},
           {"fresh_s", m.fresh_seconds}, {"paced_s", (baseline ? base_blocks_ : impl_blocks_).back().paced},
           {"pinned", pairing_.pinned()}});
  }

  double block_timeout(const TimingOptions& o) const { return limits_.call_timeout + 4 * o.rule.timeout + o.warmup_time; }

  const TestRequest& req_;
  TestWorkers w_;
  DriverLimits limits_;
  TestResult r_;
  std::optional<TestResult> failed_;
  bool first_call_returned_ = false;  // the implementation returned from a call on this case (BB_ERR_UNSUPPORTED after that is an ERROR)
  Clock::time_point started_, phase_start_;
  const char* phase_ = "setup_s";
  const ConcreteCase* c_ = nullptr;
  std::shared_ptr<const SealedBlob> inputs_, expected_;  // the case's, shared with other tests of the run (blob_cache.hpp)
  SealedBlob first_;
  // Each worker's standing in this test: its call prepared there (ended, or the checker's watch
  // ended, when the test ends), and whether its process is to be replaced instead (no word to it).
  struct WorkerState {
    bool open = false, fatal = false;
  };
  WorkerState impl_, reference_, baseline_, checker_;
  bool impl_crashed_ = false;  // its worker died: nothing to end
  uint64_t secret_ = 0;
  std::set<std::size_t> checked_before_;  // impl block indices preceded by a checked call
  std::optional<std::vector<DeviceCheckItem>> checks_;  // what the checker compares (device_check.hpp)
  bool device_check_ = false;  // the blocks are checked on the device now
  bool timing_ = false;  // measure() has begun: the workers it needs have started (use_impl_side)
  CpuPairing pairing_;   // a CPU pairing's one CPU
  int pinned_cpu_ = -1;  // the CPU the pairing ended pinned to, for the result
  bool stage_on_device_ = true, reference_watched_ = false;  // checked_on_device
  bool device_case_ = false;  // plan_checks
  bool watch_tried_ = false;
  int checked_calls_ = 0;
  std::unique_ptr<FreshInputs> fresh_;  // fresh inputs for every timed sample (measure())
  bool fresh_on_device_ = false;         // made on the device by the workers, kept by the checker
  std::string fresh_note_;
  std::vector<BlockRecord> impl_blocks_, base_blocks_;
  double host_wait_ = 0;  // this thread's run-queue wait in the last block (CPU timing)
};

}  // namespace bb::judge
