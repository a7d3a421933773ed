// A test's first steps (judge/state.hpp): the case and its inputs, each worker's call
// prepared, the reference's expected outputs (on the host, or kept on the device), and one call
// of the implementation judged as a call.
#pragma once

#include "run/judge/state.hpp"

namespace bb::judge {

class ReferenceSteps : public TestState {
 protected:
  using TestState::TestState;

  // ---- the steps
  // Inputs of the case, made here from its seed; `salt` other than "" makes other values of the
  // same shapes and initialisers from the host's secret, and `sparse` changes only about one
  // element in kSparseEvery (4096), at least one, of the case's inputs to such values.
  Expected<SealedBlob> inputs_blob(const std::string& salt, uint64_t secret, bool sparse) {
    const BlobLayout l = inputs_layout(*c_);
    const SealedBlob* base = nullptr;
    if (sparse) {
      auto b = host_inputs();
      if (!b) return b.error();
      base = *b;
    }
    std::string error;
    auto blob = SealedBlob::create(l.total, [&](uint8_t* p) {
      for (size_t i = 0; i < c_->inputs.size() && error.empty(); ++i) {
        const auto& t = c_->inputs[i];
        uint8_t* at = p + l.offsets[i];
        if (salt.empty()) {
          if (auto s = fill_tensor(t, at, mix_seed(c_->seed, t.name), req_.data_dir); !s) error = s.error().message;
          continue;
        }
        const uint64_t seed = mix_seed(secret, salt + ":" + t.name);
        if (!sparse) {
          if (auto s = fill_tensor(t, at, seed, req_.data_dir); !s) error = s.error().message;
          continue;
        }
        // The case's inputs (made once: host_inputs) with a few elements at secret places changed
        // to fresh values (one in kSparseEvery, at least one): a cache keyed by k sampled
        // elements notices the change with odds of about k in kSparseEvery, so it must read
        // nearly every element to tell these inputs from the case's. Only those elements are
        // made (an .npy input's fresh values are its file's: the same, as before).
        parallel_copy(at, base->data() + l.offsets[i], t.nbytes());
        const auto n = static_cast<uint64_t>(t.numel());
        for (uint64_t j = 0; n > 0 && j < std::max<uint64_t>(1, n / kSparseEvery); ++j) {
          const uint64_t k = random_bits(seed, j) % n;
          if (const auto v = init_value(t.init, seed, k)) store_element(t.dtype, at, k, *v);
        }
      }
    });
    if (!error.empty()) return make_error(error);
    return blob;
  }

  // Whether the checker compares this test's buffers on the device (checks_), and whether the
  // whole case stays there (device_case_): a device case of checker size, every input made by a
  // generator the device has (not .npy), no in-place output, the reference on the same device,
  // no determinism check (it compares two calls' buffers on the host). Its inputs are then made
  // by each worker on its device (the host's bits: init_values.h), the reference's buffers stay
  // on the device for the checker, and the host makes either only to explain a "no".
  void plan_checks() {
    // A timed test of any size: its samples' fresh inputs are made on the device and kept by the
    // checker (measure()).
    const bool fresh = req_.time && req_.timing.mode == TimingMode::cold && !sandbox_part_off("fresh");
    if (!w_.checker || !req_.check || is_cpu(req_.device) || (buffers_layout(*c_).total < limits_.device_check_min_bytes && !fresh)) return;
    const bool in_place = std::any_of(c_->outputs.begin(), c_->outputs.end(), [](const ConcreteOutput& o) { return o.inplace_input >= 0; });
    // A reference library only: its buffers are believed on the device unseen (an
    // implementation serving as the reference could leave poison there for a twin to match).
    device_case_ = !in_place && input_recipes("", 0, false).has_value() && req_.reference_device == req_.device &&
                   req_.reference.kind == Target::Kind::reference && !req_.check_determinism;
    if (req_.time || device_case_) checks_ = device_checks(*c_);
    if (!checks_) device_case_ = false;
  }

  std::optional<TestResult> make_inputs() {
    enter("inputs_s");
    plan_checks();
    if (device_case_) return std::nullopt;  // each worker makes them on its device
    if (auto in = host_inputs(); !in) return finish(Verdict::error, "inputs: " + in.error().message);
    return std::nullopt;
  }
  // The case's inputs in host memory, made once per run (blob_cache.hpp); a device case's only
  // where the host must judge.
  Expected<const SealedBlob*> host_inputs() {
    if (inputs_ || (inputs_ = BlobCache::shared().find(inputs_key()))) return inputs_.get();
    const auto t0 = Clock::now();
    auto blob = inputs_blob("", 0, false);
    trace_host("inputs", t0);
    if (!blob) return blob.error();
    inputs_ = BlobCache::shared().keep(inputs_key(), std::move(*blob));
    return inputs_.get();
  }
  // The reference's buffers for the case's inputs in host memory, likewise.
  Expected<const SealedBlob*> host_expected() {
    if (expected_ || (expected_ = BlobCache::shared().find(expected_key()))) return expected_.get();
    if (auto in = host_inputs(); !in) return in.error();
    auto blob = reference_buffers(nullptr);
    if (!blob) return blob.error();
    expected_ = BlobCache::shared().keep(expected_key(), std::move(*blob));
    return expected_.get();
  }
  // A worker's prepare request for the case: its inputs made on the device, or the host's blob.
  Expected<ExecOutcome> send_prepare(Executor& e, const char* side, PrepareRequest p) {
    int fd = -1;
    if (device_case_) {
      p.generate = input_recipes("", 0, false);
    } else {
      p.generate.reset();
      auto in = host_inputs();
      if (!in) return in.error();
      fd = (*in)->fd();
    }
    Expected<ExecOutcome> out = std::string(side) == "impl" ? ask_impl(request_json(p), limits_.call_timeout, fd)
                                                            : Expected<ExecOutcome>(exec(e, side, request_json(p), limits_.call_timeout, fd));
    if (out && p.generate && out->status == ExecOutcome::Status::ok) {
      const CallReply c = CallReply::from_json(out->reply);
      if (!c.error.empty() && !c.skipped && !out->reply.value("fatal", false)) {
        // It could not make them (a runtime without fill, memory): the host's, and the case
        // goes the host's way from here on.
        device_case_ = false;
        return send_prepare(e, side, p);
      }
    }
    return out;
  }

  std::optional<TestResult> prepare() {
    enter("setup_s");
    PrepareRequest p = prepare_request("impl", req_.impl, req_.device);
    p.shareable = checks_.has_value();  // the checker maps its buffers (plan_checks)
    auto out = send_prepare(*w_.impl, "impl", p);
    if (!out) return failed_ ? failed_ : finish(Verdict::error, "inputs: " + out.error().message);
    impl_.open = true;
    const CallReply c = CallReply::from_json(out->reply);
    if (c.skipped) return finish(Verdict::skipped, c.error);
    if (!c.error.empty()) return call_failure(c, "");
    return std::nullopt;
  }

  // The reference's buffers for `inputs` (the case's or another set), from its own worker.
  // The reference's prepared call, once per test. Its buffers are shareable where its checked calls may
  // be made on the device (checked_on_device).
  Status prepare_reference() {
    w_.reference->freeze(false);  // it may be the baseline's worker, frozen while the implementation ran
    if (reference_.open) return Ok{};
    PrepareRequest p = prepare_request("reference", req_.reference, req_.reference_device);
    p.shareable = checks_.has_value() && req_.reference_device == req_.device;
    auto sent = send_prepare(*w_.reference, "reference", p);
    if (!sent) return sent.error();
    ExecOutcome& out = *sent;
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return make_error(out.detail);
    }
    reference_.open = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (c.skipped) return make_error("skipped: " + c.error);
    if (!c.error.empty()) return make_error(c.error);
    return Ok{};
  }

  Expected<SealedBlob> reference_buffers(const SealedBlob* other) {
    if (auto s = prepare_reference(); !s) return s.error();
    CallRequest call;
    call.role = "reference";
    call.witnessed = false;
    ExecOutcome out = exec(*w_.reference, "reference", request_json(call), limits_.call_timeout, other ? other->fd() : -1);
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return make_error(out.detail);
    }
    if (out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (!c.error.empty()) return make_error(c.error);
    if (!c.left_behind.empty()) return make_error("the call " + c.left_behind);
    auto blob = SealedBlob::adopt(std::move(out.fd), buffers_layout(*c_).total);
    if (!blob) return make_error(blob.error().message);
    if (auto e = reference_unwritten(*c_, CallBuffersView(*c_, *blob)); !e.empty()) return make_error(e);
    return blob;
  }

  std::optional<TestResult> reference() {
    enter("reference_s");
    if (device_case_) return reference_on_device();
    if ((expected_ = BlobCache::shared().find(expected_key()))) return std::nullopt;  // another implementation's test made it
    auto blob = reference_buffers(nullptr);
    if (!blob) {
      const std::string& m = blob.error().message;
      if (m.rfind("skipped: ", 0) == 0) return finish(Verdict::skipped, "reference: " + m.substr(9));
      return finish(Verdict::error, "reference: " + m);
    }
    expected_ = BlobCache::shared().keep(expected_key(), std::move(*blob));
    return std::nullopt;
  }

  // A device case's reference: its call on the inputs its worker made, its buffers kept on the
  // device for the checker (check()).
  std::optional<TestResult> reference_on_device() {
    if (auto s = prepare_reference(); !s) {
      const std::string& m = s.error().message;
      if (m.rfind("skipped: ", 0) == 0) return finish(Verdict::skipped, "reference: " + m.substr(9));
      return finish(Verdict::error, "reference: " + m);
    }
    CallRequest keep;
    keep.witnessed = false;
    keep.return_buffers = false;
    keep.role = "reference";
    const nlohmann::json request = request_json(keep);
    ExecOutcome out = exec(*w_.reference, "reference", request, limits_.call_timeout);
    if (out.status != ExecOutcome::Status::ok) {
      reference_.fatal = true;
      return finish(Verdict::error, "reference: " + out.detail);
    }
    if (out.reply.value("fatal", false)) reference_.fatal = true;
    const CallReply c = CallReply::from_json(out.reply);
    if (c.unsupported && c.left_behind.empty())
      return finish(Verdict::skipped, "the reference does not support this case: " + c.error.substr(c.error.find(": ") + 2));
    if (!c.error.empty()) return finish(Verdict::error, "reference: " + c.error);
    if (!c.left_behind.empty()) return finish(Verdict::error, "reference: the call " + c.left_behind);
    return std::nullopt;
  }

  // One call of the implementation on its prepared call's buffers; `other`: inputs other than the
  // case's. Its worker's reply (with its buffers where `return_buffers`), or the test's verdict
  // in failed_.
  Expected<ExecOutcome> impl_call_reply(const SealedBlob* other, const std::string& prefix, CallRequest how) {
    how.role = "impl";
    auto out = ask_impl(request_json(how), limits_.call_timeout, other ? other->fd() : -1);
    if (!out) return make_error("");
    const CallReply c = CallReply::from_json(out->reply);
    if (c.unsupported && !first_call_returned_ && c.left_behind.empty() && !c.outside) {
      // Its first call on this case: it does not support it. SKIPPED with its message, unless
      // the preconditions it declares admit the case; a later call that says so is an ERROR (it
      // supported the case before).
      failed_ = req_.declared_supported
                    ? finish(Verdict::error, fmt::format("{}: its declared preconditions admit this case", c.error))
                    : refusal("unsupported by the implementation: " + c.error.substr(c.error.find(": ") + 2));
      return make_error("");
    }
    if (!c.error.empty() || !c.left_behind.empty() || c.outside) {
      failed_ = call_failure(c, prefix);
      return make_error("");
    }
    first_call_returned_ = true;
    if (!c.changed_after_return.empty()) {
      failed_ = finish(Verdict::fail, prefix + c.changed_after_return);
      return make_error("");
    }
    return out;
  }
  // The same, with its buffers.
  Expected<SealedBlob> impl_call(const SealedBlob* other, const std::string& prefix) {
    auto out = impl_call_reply(other, prefix, CallRequest{});
    if (!out) return make_error("");
    auto blob = SealedBlob::adopt(std::move(out->fd), buffers_layout(*c_).total);
    if (!blob) {
      failed_ = finish(Verdict::error, prefix + "its buffers: " + blob.error().message);
      return make_error("");
    }
    return blob;
  }
};

}  // namespace bb::judge
