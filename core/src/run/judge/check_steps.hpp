// The checks of a test: the first call against the reference (on the host or the device), the
// determinism check, the checked calls at secret places among the timed blocks, and a kept sample
// on fresh inputs judged on the host.
#pragma once

#include "run/judge/device_checker.hpp"

namespace bb::judge {

class CheckSteps : public DeviceCheckerSteps {
 protected:
  using DeviceCheckerSteps::DeviceCheckerSteps;

  std::optional<TestResult> check() {
    enter("check_s");
    if (device_case_ && (device_check_ = watch())) return check_on_device();
    if (failed_) return failed_;  // the implementation's worker died while the checker was set up
    auto in = host_inputs();
    if (!in) return finish(Verdict::error, "inputs: " + in.error().message);
    auto want = host_expected();
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    auto got = impl_call(nullptr, "");
    if (!got) return failed_;
    const auto t0 = Clock::now();
    auto j = judge_first_call(*got, **in, **want);
    trace_host("judge", t0);
    if (j) {
      r_.outcome.mismatch = j->mismatch;
      return finish(j->verdict, j->message);
    }
    r_.outcome.zeros_pass = zeros_would_pass_all(*c_, CallBuffersView(*c_, **want));
    first_ = std::move(*got);
    return std::nullopt;
  }

  std::optional<TestResult> determinism() {
    if (!req_.check_determinism) return std::nullopt;
    auto again = impl_call(nullptr, "second call: ");
    if (!again) return failed_;
    if (auto e = outputs_not_identical(*c_, CallBuffersView(*c_, *again), CallBuffersView(*c_, first_)); !e.empty())
      return finish(Verdict::nondeterministic, e);
    return std::nullopt;
  }

  // A checked call on other inputs, placed among the timed blocks where the host's secret says.
  std::optional<TestResult> checked_call(int which) {
    const bool sparse = which > 0;
    const std::string salt = fmt::format("checked{}", which);
    if (auto on_device = checked_on_device(salt, sparse)) {
      if (failed_) return failed_;
      if (on_device->empty()) return std::nullopt;
      return finish(Verdict::fail, fmt::format("wrong while timed: a call on {} between two timed blocks: {}",
                                               sparse ? "the case's inputs with a few elements changed" : "fresh input values", *on_device));
    }
    auto t0 = Clock::now();
    auto other = inputs_blob(salt, secret_, sparse);
    if (!other) return finish(Verdict::error, "other inputs: " + other.error().message);
    trace_host("checked_inputs", t0);
    t0 = Clock::now();
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    trace_host("checked_freeze", t0);
    t0 = Clock::now();
    auto want = reference_buffers(&*other);
    if (!want) return finish(Verdict::error, "reference: " + want.error().message);
    trace_host("checked_reference", t0);
    t0 = Clock::now();
    const std::string prefix = "while timed, a checked call on other inputs: ";
    std::string why;
    if (expect(&*want)) {  // compared on the device where the checker watches the case: no buffers come home
      CallRequest keep;
      keep.return_buffers = false;
      if (!impl_call_reply(&*other, prefix, keep)) return failed_;
      trace_host("checked_impl", t0);
      t0 = Clock::now();
      why = verify_on_device(*other, *want);
      if (failed_) return failed_;
      expect(nullptr);  // the case's buffers again, for the blocks to come
      trace_host("checked_compare", t0);
    } else {
      auto got = impl_call(&*other, prefix);
      if (!got) return failed_;
      trace_host("checked_impl", t0);
      t0 = Clock::now();
      why = outputs_differ(*c_, CallBuffersView(*c_, *got), CallBuffersView(*c_, *want));
      trace_host("checked_compare", t0);
    }
    if (!why.empty())
      return finish(Verdict::fail, fmt::format("wrong while timed: a call on {} between two timed blocks: {}",
                                               sparse ? "the case's inputs with a few elements changed" : "fresh input values", why));
    return std::nullopt;
  }

  // The buffers a timed sample on fresh inputs left (fresh_inputs.hpp), against the reference's
  // for the same inputs, made here again from the sample's seed: "" when right. No judgement without
  // the reference is never a pass (failed_ is set).
  std::string judge_fresh(const FreshInputs::Kept& kept) {
    auto t0 = Clock::now();
    auto in = fresh_->inputs_of(kept.seed);
    if (!in) {
      failed_ = finish(Verdict::error, "fresh inputs: " + in.error().message);
      return "";
    }
    w_.impl->freeze(true);  // the reference runs alone
    if (w_.baseline && w_.baseline != w_.reference) w_.baseline->freeze(true);
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    auto want = reference_buffers(&*in);
    if (!want) {
      failed_ = finish(Verdict::error, "reference: " + want.error().message);
      return "";
    }
    trace_host("fresh_reference", t0);
    t0 = Clock::now();
    std::string why;
    if (auto j = judge_call(*c_, CallBuffersView(*c_, kept.buffers), *in, CallBuffersView(*c_, *want))) why = j->message;
    trace_host("fresh_compare", t0);
    return why;
  }
};

}  // namespace bb::judge
