// The timed part of a test: one block of one side (paired_timer.hpp's callback), the audit of
// the implementation's worker, and measure(): the pairing, fresh inputs, the blocks, the audits
// and the timing copied into the result.
#pragma once

#include "run/judge/check_steps.hpp"

namespace bb::judge {

class TimingSteps : public CheckSteps {
 protected:
  using CheckSteps::CheckSteps;

  // Before a side's block: a checked call where one is due (the implementation's), its side of
  // the pairing.
  Status side_before_block(bool baseline) {
    if (baseline) {
      use_baseline_side();
      return Ok{};
    }
    if (checked_before_.count(impl_blocks_.size()))
      if (auto failed = checked_call(checked_calls_++)) {
        failed_ = *failed;
        return make_error("checked call");
      }
    use_impl_side();
    return Ok{};
  }

  // A block's fresh inputs begun: its pacing socket sent once, its server started. A device
  // case's samples are kept by the checker, which maps the implementation's buffers (not the
  // baseline's: its side keeps none), called from the pacing thread: the checker's channel
  // alone, nothing of the driver's. "" or why not.
  std::string begin_fresh_block(bool baseline, Executor& side, const char* role) {
    std::string e = fresh_->attached(baseline) ? "" : fresh_->attach(baseline, side, role, limits_.call_timeout);
    FreshInputs::KeepOnDevice keep;
    const bool keeping = req_.check && (!fresh_on_device_ || !baseline);
    if (fresh_on_device_ && keeping)
      keep = [this](std::size_t) -> std::string {
        ExecOutcome o = w_.checker->execute(request_json(KeepSampleRequest{}), limits_.call_timeout, -1);
        if (o.status != ExecOutcome::Status::ok) return "the checker: " + o.detail;
        return o.reply.value("error", "");
      };
    if (e.empty()) e = fresh_->begin(baseline, keeping, pairing_.cpu_for_block(), std::move(keep));
    return e;
  }

  // A block's reply read: its worker ended or timed out, its code changed, a call failed.
  Status block_reply(bool baseline, ExecOutcome& out) {
    if (out.status != ExecOutcome::Status::ok) {
      if (baseline) {
        baseline_.fatal = true;
        return make_error("baseline: its worker: " + out.detail);
      }
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      failed_ = finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout, "while timing: " + out.detail);
      return make_error("worker");
    }
    if (out.reply.value("fatal", false)) (baseline ? baseline_.fatal : impl_.fatal) = true;
    if (!baseline)
      if (std::string t = out.reply.value("tampered", ""); !t.empty()) {
        failed_ = finish(Verdict::implausible, fmt::format("its worker's own code changed while timed (block {}): {}", impl_blocks_.size() + 1, t));
        return make_error("block");
      }
    const CallReply c = CallReply::from_json(out.reply);
    if (!c.error.empty() || !c.left_behind.empty()) {
      if (baseline) return make_error("baseline: " + (c.error.empty() ? "the calls " + c.left_behind : c.error));
      failed_ = c.sticky ? finish(Verdict::crash, "while timing: " + c.error)
                         : finish(Verdict::error, "while timing: " + (c.error.empty() ? "the calls " + c.left_behind : c.error));
      return make_error("block");
    }
    return Ok{};
  }

  Status check_pacing(bool baseline, const Measurement& m, const std::optional<FreshInputs::Served>& served) {
    // Every sample it reports is one the host paced, on inputs made for it, and the block ended as
    // the protocol ends it: samples run on other inputs (a cache's hits between two paced ones)
    // are not its to report.
    // A device sample the clock throttled is paced and dropped (measurement.hpp): never more
    // reported than paced.
    const bool paced_right = !served || (fresh_on_device_ ? m.paced == served->samples && m.samples.size() <= m.paced : served->samples == m.samples.size());
    if (served && (!paced_right || m.batch != 1 || !served->saw_last)) {
      const std::string why = fmt::format("its worker reported {} samples of {} call(s) each; the host made inputs for {}{}", m.samples.size(),
                                          m.batch, served->samples, served->saw_last ? "" : ", and was not told the block's last had ended");
      if (baseline) return make_error("baseline: fresh inputs: " + why);
      failed_ = finish(Verdict::implausible, fmt::format("while timing, block {} on fresh inputs: {}", impl_blocks_.size() + 1, why));
      return make_error("block");
    }
    return Ok{};
  }

  // The implementation's block judged: its kept sample on fresh inputs, else its last call's
  // buffers (on the device, or at home).
  Status judge_block(ExecOutcome& out, const std::optional<FreshInputs::Kept>& fresh_kept) {
    if (fresh_) {
      if (!fresh_kept) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: block {} kept no buffers of its samples on fresh inputs for the host", impl_blocks_.size() + 1));
        return make_error("block");
      }
      const std::string why = fresh_on_device_ ? judge_fresh_on_device(*fresh_kept) : judge_fresh(*fresh_kept);
      if (failed_) return make_error("block");
      if (!why.empty()) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: sample {} of block {}, on fresh inputs: {}", fresh_kept->sample + 1,
                                                    impl_blocks_.size() + 1, why));
        return make_error("block");
      }
    } else if (device_case_ || (expected_ && !expected_->empty())) {
      auto judge_home = [&](UniqueFd home) -> std::string {
        auto in = host_inputs();
        if (!in) {
          failed_ = finish(Verdict::error, "inputs: " + in.error().message);
          return "";
        }
        auto want = host_expected();
        if (!want) {  // no judgement without the reference: never a pass
          failed_ = finish(Verdict::error, "reference: " + want.error().message);
          return "";
        }
        return check_buffers(std::move(home), **in, **want);
      };
      const std::string why = device_check_ && !out.fd ? verify_on_device(judge_home) : judge_home(std::move(out.fd));
      if (failed_) return make_error("block");  // its worker died meanwhile, or no judgement could be made
      if (!why.empty()) {
        failed_ = finish(Verdict::fail, fmt::format("wrong while timed: after the last timed call of block {}: {}", impl_blocks_.size() + 1, why));
        return make_error("block");
      }
    }
    return Ok{};
  }

  // One block of one side (paired_timer.hpp's callback).
  Expected<Measurement> block(bool baseline, const TimingOptions& options) {
    Executor& side = baseline ? *w_.baseline : *w_.impl;
    const auto freezing = Clock::now();
    if (auto s = side_before_block(baseline); !s) return s.error();
    if (pairing_.active())
      pairing_.before_block(w_.impl->tasks(), w_.baseline->tasks(), !impl_blocks_.empty() && !base_blocks_.empty(), impl_blocks_.size());
    const double freeze_seconds = std::chrono::duration<double>(Clock::now() - freezing).count();
    const char* role = baseline ? "baseline" : "impl";
    // A side's first block, unpinned: the cores it keeps busy (cpu_pairing.hpp).
    const bool first_unpinned = pairing_.measuring_first_load((baseline ? base_blocks_ : impl_blocks_).empty());
    const double cpu_before = first_unpinned ? cpu_seconds(side.tasks().processes) : 0;
    // Both sides return their buffers, though only the implementation's are checked: the clock
    // audit compares the two sides' blocks, which must cost the same to serve.
    const std::string device = fmt::format("{}:{}", req_.device, req_.device_index);
    TimingOptions timing = options;
    timing.device_warm = !is_cpu(req_.device) && DeviceActivity::shared().warm(device);
    // CPU timing: what the machine's other work took from the worker in this block (the clock
    // audit leaves it out; run_queue.hpp). Device timing's slack per call is far larger.
    const bool on_cpu = is_cpu(req_.device);
    const RunQueueSnapshot queued = on_cpu ? run_queue_snapshot(side.tasks(), side.group_cpu_seconds()) : RunQueueSnapshot{};
    const double host_wait_before = on_cpu ? own_thread_wait() : 0;
    if (fresh_)  // fresh inputs for every sample, made here (fresh_inputs.hpp)
      if (std::string e = begin_fresh_block(baseline, side, role); !e.empty()) {
        if (baseline) return make_error("baseline: fresh inputs: " + e);
        failed_ = finish(Verdict::error, "while timing: fresh inputs: " + e);
        return make_error("block");
      }
    ExecOutcome out = side.execute(request_json(BlockRequest{role, timing, !device_check_ && !fresh_}), block_timeout(options));
    std::optional<FreshInputs::Kept> fresh_kept;
    std::optional<FreshInputs::Served> served;
    // The clock audit takes the block's whole time, the host's making of inputs in it: the worker
    // is to be idle then, and what it does meanwhile on the pairing's core delays the host's
    // answer; the baseline's blocks carry the same making (docs/RELIABILITY.md, limits).
    if (fresh_) {
      served = fresh_->end(baseline);
      r_.phases.seconds["fresh_inputs_s"] += served->make_seconds;
      if (!served->error.empty() && out.status == ExecOutcome::Status::ok) {
        if (baseline) return make_error("baseline: fresh inputs: " + served->error);
        failed_ = finish(Verdict::error, "while timing: fresh inputs: " + served->error);
        return make_error("block");
      }
      if (!baseline) fresh_kept = std::move(served->kept);
    }
    // The checker's copies of a kept sample are the host's (its worker waits, as it does while
    // the host makes a CPU sample's inputs), and the baseline's side has none: out of the audit.
    if (served) out.seconds = std::max(0.0, out.seconds - served->keep_seconds);
    host_wait_ = on_cpu ? own_thread_wait() - host_wait_before : 0;
    const double waited = on_cpu ? foreign_wait(queued, run_queue_snapshot(side.tasks(), side.group_cpu_seconds()), host_wait_) : 0;
    if (!is_cpu(req_.device)) DeviceActivity::shared().timed(device);
    if (first_unpinned && out.seconds > 0) pairing_.note_first_load(baseline, (cpu_seconds(side.tasks().processes) - cpu_before) / out.seconds);
    if (!baseline) keep_output(out);
    if (auto s = block_reply(baseline, out); !s) return s.error();
    Measurement m = measurement_from_json(out.reply.value("measurement", nlohmann::json::object()));
    if (fresh_on_device_) r_.phases.seconds["fresh_inputs_s"] += m.fresh_seconds;  // its worker's waits for each go, and its making
    if (m.samples.empty()) {
      if (baseline) return make_error("baseline: a block without samples");
      failed_ = finish(Verdict::error, "while timing: its worker reported a block without samples");
      return make_error("block");
    }
    if (auto s = check_pacing(baseline, m, served); !s) return s.error();
    const auto checking = Clock::now();
    if (!baseline && req_.check)
      if (auto s = judge_block(out, fresh_kept); !s) return s.error();
    // A CPU block on fresh inputs is audited sample by sample (clock_audit.hpp, audit_paced).
    std::vector<double> paced = served && on_cpu ? std::move(served->paced_seconds) : std::vector<double>{};
    (baseline ? base_blocks_ : impl_blocks_).push_back({out.seconds, waited, m, std::move(paced)});
    trace_block(baseline, m, out.seconds, waited, std::chrono::duration<double>(Clock::now() - checking).count(), freeze_seconds,
                out.reply.value("steps", nlohmann::json::object()));
    return m;
  }

  // The implementation's worker checks its own code, GOT and read-only data against what they
  // were before the plugin loaded (worker_integrity.hpp): a clock or timer rewritten and put
  // back between the blocks' checks still shows in the code or data it left changed.
  std::optional<TestResult> audit_worker() {
    ExecOutcome out = exec(*w_.impl, "impl", request_json(AuditRequest{}), limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok) {
      impl_crashed_ = true;
      r_.outcome.crash = std::move(out.crash);
      return finish(out.status == ExecOutcome::Status::crashed ? Verdict::crash : Verdict::timeout,
                    "after timing, at the audit of its worker's own code: " + out.detail);
    }
    if (out.reply.value("fatal", false)) impl_.fatal = true;
    if (std::string t = out.reply.value("tampered", ""); !t.empty())
      return finish(Verdict::implausible, "its worker's own code changed while timed: " + t);
    return std::nullopt;
  }

  // Fresh inputs for every timed sample of a CPU case (fresh_inputs.hpp): where some input can
  // vary, in cold timing, with its outputs checked. The inputs that cannot vary say so.
  // A device case's (made there, its buffers mapped by the checker, the reference's too) are made
  // by its workers on the device from a seed per sample; the checker keeps one in secret.
  void plan_fresh_inputs() {
    const bool fresh_wanted = req_.timing.mode == TimingMode::cold && req_.check && !sandbox_part_off("fresh");
    if (fresh_wanted && (is_cpu(req_.device) || (device_case_ && device_check_ && watch_reference()))) {
      const std::vector<std::string> repeating = repeating_inputs(*c_);
      fresh_on_device_ = !is_cpu(req_.device);
      if (repeating.size() < c_->inputs.size()) fresh_ = std::make_unique<FreshInputs>(*c_, req_.data_dir, fresh_on_device_);
      if (!repeating.empty())
        fresh_note_ = fmt::format("inputs repeat: {} keep{} {} values in every timed call (constant, arange or a file)", fmt::join(repeating, ", "),
                                  repeating.size() == 1 ? "s" : "", repeating.size() == 1 ? "its" : "their");
    } else if (fresh_wanted) {
      fresh_note_ = "inputs repeat: a block's timed calls all run on the case's inputs (fresh inputs for every sample need the case on its "
                    "device, checked there: a reference on the same device, floating outputs, no .npy input, no in-place output)";
    }
  }

  // Where the checked calls go among the blocks: the host's secret, drawn now, known to no worker.
  BlockStop place_checked_calls() {
    std::random_device rd;
    secret_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    std::mt19937_64 draw(secret_);
    BlockStop stop = block_stop(req_.timing);
    while (req_.check && checked_before_.size() < static_cast<std::size_t>(std::min<std::size_t>(kCheckedCalls, stop.min_blocks - 1)))
      checked_before_.insert(1 + draw() % (stop.min_blocks - 1));
    for (std::size_t window = stop.min_blocks; req_.check && window < stop.max_blocks; window += stop.min_blocks)
      checked_before_.insert(window + draw() % stop.min_blocks);

    return stop;
  }

  // The baseline's call prepared for a paired timing: "" where it is, else why there is no
  // speedup (an identity baseline, a baseline that fails); an error where the case's inputs
  // could not be sent (the test's ERROR).
  Expected<std::string> prepare_baseline_side() {
    std::string pairing_note;
    if (req_.baseline && (!w_.baseline || req_.baseline->kind == Target::Kind::identity))
      pairing_note = "baseline: an identity baseline cannot be timed";
    if (req_.baseline && pairing_note.empty()) {
      use_baseline_side();
      auto sent = send_prepare(*w_.baseline, "baseline", prepare_request("baseline", *req_.baseline, req_.device));
      if (!sent) return make_error("inputs: " + sent.error().message);
      ExecOutcome& out = *sent;
      const CallReply c = CallReply::from_json(out.reply);
      if (out.status != ExecOutcome::Status::ok) baseline_.fatal = true, pairing_note = "baseline: its worker: " + out.detail;
      else if (!c.error.empty()) pairing_note = "baseline: " + c.error;
      else baseline_.open = true;
    }
    return pairing_note;
  }

  // What the host's own clock, the baseline's blocks and physics say of the reported times; then
  // the timing, speedup aside, into the result.
  std::optional<TestResult> record_timing(const Measurement& meas, double baseline_measured, const std::string& pairing_note) {
    TimingAudit audit;
    audit.options.device = !is_cpu(req_.device);
    audit.options.pinned = pinned_cpu_ >= 0;
    audit.cold = req_.timing.mode == TimingMode::cold;
    audit.median = meas.stats.median;
    audit.bytes = c_->bytes;
    audit.peak_bytes_per_second = limits_.peak_bytes_per_second;
    const std::optional<std::string> implausible = audit_timing(impl_blocks_, base_blocks_, audit);
    if (implausible) return finish(Verdict::implausible, *implausible);

    Timing t = timing_of(meas);
    t.baseline_measured_time = baseline_measured;
    if (fresh_) t.fresh_inputs = fresh_on_device_ ? "device" : "host";
    t.pinned_cpu = pinned_cpu_;
    if (!pairing_note.empty()) t.notes.push_back(pairing_note + ": no speedup");
    if (!pairing_.note().empty()) t.notes.push_back(pairing_.note());
    if (!fresh_note_.empty()) t.notes.push_back(fresh_note_);
    r_.performance.timing = t;
    const double med = meas.stats.median;
    if (med > 0 && c_->flops) r_.performance.tflops = *c_->flops / med / 1e12;
    if (med > 0 && c_->bytes) r_.performance.gbps = *c_->bytes / med / 1e9;
    return std::nullopt;
  }

  std::optional<TestResult> measure() {
    enter("timing_s");
    if (w_.quiet) w_.quiet();  // the next implementation's worker, started ahead, is ready first
    timing_ = true;
    plan_fresh_inputs();
    const BlockStop stop = place_checked_calls();
    auto prepared = prepare_baseline_side();
    if (!prepared) return finish(Verdict::error, prepared.error().message);
    std::string pairing_note = *prepared;
    bool paired = req_.baseline && pairing_note.empty();
    device_check_ = watch();
    if (failed_) return *failed_;
    Measurement meas;
    double baseline_measured = 0;
    auto alone = [&]() -> std::optional<TestResult> {
      impl_blocks_.clear();
      auto m = measure_blocks([&](const TimingOptions& o) { return block(false, o); }, req_.timing, stop);
      if (!m) return failed_ ? *failed_ : finish(Verdict::error, "while timing: " + m.error().message);
      meas = std::move(*m);
      return std::nullopt;
    };
    if (!paired) {
      if (auto failed = alone()) return failed;
    } else {
      BlockStop paired_stop = stop;
      paired_stop.floor = kProcessFloor;  // two processes: docs/PERFORMANCE.md
      if (is_cpu(req_.device)) pairing_.begin();
      auto p = measure_paired([&](bool baseline, const TimingOptions& o) { return block(baseline, o); }, req_.timing, paired_stop);
      pinned_cpu_ = end_pairing();
      if (!p && failed_) return *failed_;
      if (!p) {
        // The baseline's fault, not the implementation's: timed alone, and the result says why
        // it has no speedup.
        pairing_note = p.error().message;
        base_blocks_.clear();
        if (auto failed = alone()) return failed;
      } else {
        meas = std::move(p->impl);
        baseline_measured = p->baseline.measured_time;
        r_.performance.baseline_median = p->baseline.stats.median;
        if (p->speedup)  // two processes: docs/PERFORMANCE.md
          p->speedup = widen_to_resolution(*p->speedup, p->baseline.stats.median, meas.stats.median, kProcessFloor);
        if (p->speedup) {
          r_.performance.speedup = p->speedup->speedup;
          r_.performance.speedup_low = p->speedup->low;
          r_.performance.speedup_high = p->speedup->high;
          r_.performance.speedup_confidence = p->speedup->confidence;
          r_.performance.speedup_pairs = static_cast<double>(p->speedup->pairs);
          r_.performance.speedup_resolution = p->speedup->resolution;
        }
      }
    }
    for (Executor* e : {w_.impl, w_.baseline})
      if (e) e->freeze(false);
    if (auto failed = audit_worker()) return failed;
    return record_timing(meas, baseline_measured, pairing_note);
  }
};

}  // namespace bb::judge
