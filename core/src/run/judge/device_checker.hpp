// The device checker's conversation (device_check.hpp): a worker that holds no plugin compares
// the implementation's buffers with the reference's on the device, watches both, keeps a timed
// sample on fresh inputs, and sends buffers home only to explain a "no".
#pragma once

#include "run/judge/reference_steps.hpp"

namespace bb::judge {

class DeviceCheckerSteps : public ReferenceSteps {
 protected:
  using ReferenceSteps::ReferenceSteps;

  // A device case's first call, compared by the checker with the reference's buffers kept on the
  // device. A "no" brings the buffers home, with the case's inputs and the reference's buffers
  // made on the host, for the host's verdict and message: the device never passes a call the
  // host would fail, and a call it failed is never PASS.
  std::optional<TestResult> check_on_device() {
    CallRequest keep;
    keep.return_buffers = false;
    if (!impl_call_reply(nullptr, "", keep)) return failed_;
    auto t0 = Clock::now();
    ExecOutcome out = exec(*w_.checker, "checker", request_json(VerifyRequest{.figures = true}), limits_.call_timeout);
    const bool answered = checker_ok(out);
    const VerifyReply said = verify_reply_from_json(out.reply);
    trace_host("check_on_device", t0);
    if (answered && said.ok) {
      r_.outcome.zeros_pass = said.zeros_pass.value_or(false);
      r_.outcome.errors = said.errors;
      return std::nullopt;
    }
    if (!answered) device_check_ = false;
    auto home = ask_impl(request_json(BuffersRequest{"impl"}), limits_.call_timeout);
    if (!home) return failed_;
    auto in = host_inputs();
    if (!in) return finish(Verdict::error, "inputs: " + in.error().message);
    auto want = host_expected();
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    auto got = SealedBlob::adopt(std::move(home->fd), buffers_layout(*c_).total);
    if (!got) return finish(Verdict::error, "its buffers: " + got.error().message);
    if (auto j = judge_first_call(*got, **in, **want)) {
      r_.outcome.mismatch = j->mismatch;
      return finish(j->verdict, j->message);
    }
    if (!answered) return std::nullopt;
    return finish(Verdict::fail, fmt::format("on the device, {}; its buffers sent afterwards agree: they changed after the check",
                                             said.why.empty() ? "they differ" : said.why));
  }

  // The checker maps the reference's buffers, once per test (checked_on_device).
  bool watch_reference() {
    if (reference_watched_) return true;
    if (!prepare_reference()) return false;
    const BlobLayout l = buffers_layout(*c_);
    for (int k = 0; k < mirror_count(*c_); ++k) {
      ExecOutcome out = exec(*w_.reference, "reference", request_json(ExportRequest{"reference", k}), limits_.call_timeout);
      if (out.status != ExecOutcome::Status::ok) {
        reference_.fatal = true;
        return false;
      }
      if (!out.reply.value("error", "").empty() || !out.fd) return false;  // not shareable: the host carries the checked calls
      out = exec(*w_.checker, "checker",
                 request_json(WatchReferenceRequest{k, out.reply.value("bytes", std::size_t{0}), l.offsets[static_cast<size_t>(k)], l.sizes[static_cast<size_t>(k)]}),
                 limits_.call_timeout, out.fd.get());
      if (!checker_ok(out)) return false;
    }
    reference_watched_ = true;
    return true;
  }

  // A checked call made and compared on the device, where the checker watches the case and the
  // reference runs on the same device (device_check.hpp): the reference's worker makes the call's
  // inputs from the host's secret and calls the reference; the checker copies those inputs into
  // the implementation's buffers and, after its call, compares. Nothing crosses to the host but a
  // "no", whose inputs and reference buffers the host then makes itself, for its own judgement.
  // nullopt where it cannot be done (the host's blobs carry the call); else "" or why it was wrong.
  std::optional<std::string> checked_on_device(const std::string& salt, bool sparse) {
    const bool in_place = std::any_of(c_->outputs.begin(), c_->outputs.end(), [](const ConcreteOutput& o) { return o.inplace_input >= 0; });
    // A reference library only, as for a device case (plan_checks): its buffers are compared with unseen.
    if (!device_check_ || !stage_on_device_ || in_place || req_.reference_device != req_.device ||
        req_.reference.kind != Target::Kind::reference)
      return std::nullopt;
    const auto recipes = input_recipes(salt, secret_, sparse);
    auto t0 = Clock::now();
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    if (!recipes || !watch_reference()) {
      stage_on_device_ = false;
      return std::nullopt;
    }
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    CallRequest reference;
    reference.witnessed = false;
    reference.return_buffers = false;
    reference.generate = *recipes;
    reference.role = "reference";
    ExecOutcome out = exec(*w_.reference, "reference", request_json(reference), limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok || out.reply.value("fatal", false)) reference_.fatal = true;
    if (out.status != ExecOutcome::Status::ok || !CallReply::from_json(out.reply).error.empty() || !CallReply::from_json(out.reply).left_behind.empty()) {
      stage_on_device_ = false;  // the host's blobs say what went wrong
      return std::nullopt;
    }
    out = exec(*w_.checker, "checker", request_json(StageRequest{static_cast<int>(c_->inputs.size())}), limits_.call_timeout);
    if (!checker_ok(out)) {
      stage_on_device_ = false;
      return std::nullopt;
    }
    trace_host("checked_staged", t0);
    t0 = Clock::now();
    CallRequest impl;
    impl.staged = true;
    impl.return_buffers = false;
    if (!impl_call_reply(nullptr, "while timed, a checked call on other inputs: ", impl)) return "";  // failed_ says why
    trace_host("checked_impl", t0);
    t0 = Clock::now();
    std::string why = verify_on_device([&](UniqueFd home) -> std::string {
      auto other = inputs_blob(salt, secret_, sparse);  // the same values, made on the host
      if (!other) {
        failed_ = finish(Verdict::error, "other inputs: " + other.error().message);
        return "";
      }
      auto want = reference_buffers(&*other);
      if (!want) {  // no judgement without the reference: never a pass
        failed_ = finish(Verdict::error, "reference: " + want.error().message);
        return "";
      }
      return check_buffers(std::move(home), *other, *want);
    });
    if (failed_) return "";
    expect(nullptr);  // the case's buffers again, for the blocks to come
    trace_host("checked_compare", t0);
    return why;
  }

  // The checker watches the implementation's buffers against the reference's: true when it does.
  bool watch() {
    if (watch_tried_) return device_check_;
    watch_tried_ = true;
    if (!checks_ || (!device_case_ && !expected_)) return false;
    ExecOutcome out = exec(*w_.checker, "checker",
                           request_json(WatchRequest{req_.device, req_.device_index, to_json(*checks_), buffers_layout(*c_).total}),
                           limits_.call_timeout, device_case_ ? -1 : expected_->fd());
    if (!checker_ok(out)) return false;
    checker_.open = true;
    for (int k = 0; k < mirror_count(*c_); ++k) {
      auto exported = ask_impl(request_json(ExportRequest{"impl", k}), limits_.call_timeout);
      if (!exported) return false;  // its worker died: the test's verdict is set
      if (!exported->reply.value("error", "").empty() || !exported->fd) return false;
      out = exec(*w_.checker, "checker", request_json(WatchMirrorRequest{k, exported->reply.value("bytes", std::size_t{0})}),
                 limits_.call_timeout, exported->fd.get());
      if (!checker_ok(out)) return false;
    }
    if (device_case_) {  // the case's reference buffers, from the reference's device memory
      if (!watch_reference()) return false;
      out = exec(*w_.checker, "checker", request_json(KeepCaseRequest{}), limits_.call_timeout);
      if (!checker_ok(out)) return false;
    }
    return true;
  }

  // The checker compares with `b` (a checked call's buffers) from now on, or with the case's
  // buffers again (kept on its device since watch()) where `b` is null. False when it cannot:
  // the blocks then come home to be judged here.
  bool expect(const SealedBlob* b) {
    if (!device_check_) return false;
    ExecOutcome out = exec(*w_.checker, "checker", request_json(ExpectRequest{}), limits_.call_timeout, b ? b->fd() : -1);
    if (checker_ok(out)) return true;
    device_check_ = false;
    return false;
  }

  // After a call checked on the device (a block's last, or a checked call on `inputs`, whose
  // reference's buffers are `expected`): "" when the checker found it right. A "no", or a
  // checker that cannot say, brings the buffers home for the host's judgement; and a call the
  // device found wrong is never right because its buffers changed since.
  std::string verify_on_device(const SealedBlob& inputs, const SealedBlob& expected) {
    return verify_on_device([&](UniqueFd home) { return check_buffers(std::move(home), inputs, expected); });
  }
  // The same, where `judge` judges the buffers brought home (a staged checked call's inputs and
  // reference buffers are made on the host only then).
  template <typename Judge>
  std::string verify_on_device(Judge judge) {
    ExecOutcome out = exec(*w_.checker, "checker", request_json(VerifyRequest{}), limits_.call_timeout);
    const bool answered = checker_ok(out);
    const VerifyReply said = verify_reply_from_json(out.reply);
    if (answered && said.ok) return "";
    if (!answered) device_check_ = false;  // the rest of the blocks come home
    auto home = ask_impl(request_json(BuffersRequest{"impl"}), limits_.call_timeout);
    if (!home) return "its worker died while sending its buffers";
    if (std::string why = judge(std::move(home->fd)); !why.empty()) return why;
    if (!answered) return "";
    return fmt::format("on the device, {}; its buffers sent afterwards agree: they changed after the check", said.why.empty() ? "they differ" : said.why);
  }

  // A timed sample on fresh inputs that the checker kept on the device (fresh_inputs_protocol.hpp),
  // against the reference's for the same inputs: the reference's worker makes them from the
  // sample's seed on its device and calls the reference; the checker compares. "" when right. A
  // "no" brings the kept buffers home, and the reference's (its inputs and outputs) again, and
  // the host judges (its message). No judgement is never a pass (failed_ is set).
  std::string judge_fresh_on_device(const FreshInputs::Kept& kept) {
    auto t0 = Clock::now();
    auto recipes = input_recipes("fresh", kept.seed, false);
    if (!recipes) {  // a device case's inputs all have a generator there (plan_checks)
      failed_ = finish(Verdict::error, "fresh inputs: the kept sample's inputs cannot be made on the device");
      return "";
    }
    for (auto& r : *recipes) r.fresh = true;  // as the worker made them: the device's fresh generator
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    CallRequest reference;
    reference.witnessed = false;
    reference.return_buffers = false;
    reference.generate = recipes;
    reference.role = "reference";
    ExecOutcome out = exec(*w_.reference, "reference", request_json(reference), limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok || out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply made = CallReply::from_json(out.reply);
    if (out.status != ExecOutcome::Status::ok || !made.error.empty() || !made.left_behind.empty()) {
      failed_ = finish(Verdict::error, "fresh inputs: the reference on the kept sample's inputs: " +
                                           (out.status != ExecOutcome::Status::ok ? out.detail : made.error.empty() ? "the call " + made.left_behind : made.error));
      return "";
    }
    trace_host("fresh_reference", t0);
    t0 = Clock::now();
    // Compared with the reference's buffers as its call left them, then the case's again.
    out = exec(*w_.checker, "checker", request_json(VerifyKeptRequest{}), limits_.call_timeout);
    const bool answered = checker_ok(out);
    const VerifyReply said = verify_reply_from_json(out.reply);
    const bool right = answered && said.ok;
    std::string why;
    if (!right) {  // home, for the host's own judgement and message
      // The inputs and the reference's outputs as the reference's worker made them on the device
      // (the host has not the device's fresh generator), beside the kept sample's buffers.
      ExecOutcome home = exec(*w_.checker, "checker", request_json(KeptHomeRequest{}), limits_.call_timeout);
      reference.return_buffers = true;
      ExecOutcome again = exec(*w_.reference, "reference", request_json(reference), limits_.call_timeout);
      Expected<SealedBlob> want = make_error("its worker sent no buffers");
      if (again.status == ExecOutcome::Status::ok && again.fd) want = SealedBlob::adopt(std::move(again.fd), buffers_layout(*c_).total);
      auto in = want ? inputs_of_buffers(*want) : Expected<SealedBlob>(want.error());
      if (!checker_ok(home) || !home.fd || !in) {
        failed_ = finish(Verdict::error, "fresh inputs: the kept sample could not be judged: " +
                                             (!in ? "the reference: " + in.error().message : home.reply.value("error", home.detail)));
        return "";
      }
      why = check_buffers(std::move(home.fd), *in, *want);
      if (why.empty() && answered) why = "on the device, " + (said.why.empty() ? std::string("they differ") : said.why);
    }
    if (!answered) expect(nullptr);  // the case's buffers again, for the blocks to come (or the blocks come home)
    trace_host("fresh_compare", t0);
    return why;
  }
};

}  // namespace bb::judge
