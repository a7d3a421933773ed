#include "worker/device_compare.hpp"

#include <fmt/format.h>

#include "host_buffer.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/allclose.hpp"

namespace bb {

std::string DeviceChecker::watch(const ExecPlace& place, std::vector<DeviceCheckItem> items, UniqueFd expected, std::size_t expected_bytes) {
  unwatch();
  if (!place.rt) return "the checker has no device";
  place_ = place;
  const auto& api = place_.rt->api();
  if (!(api.struct_size >= offsetof(bb_device_runtime, expected_scale) + sizeof(api.expected_scale)) || !api.mismatches ||
      !api.import_shareable || !api.expected_scale)
    return "the device runtime cannot compare on the device";
  SealedBlob blob;
  if (expected) {
    auto adopted = SealedBlob::adopt(std::move(expected), expected_bytes);
    if (!adopted) return "the reference's buffers: " + adopted.error().message;
    blob = std::move(*adopted);
    expected_bytes = blob.size();
  }
  if (int e = api.malloc(&expected_, expected_bytes); e != 0) {
    expected_ = nullptr;
    return "allocating the reference's buffers: " + place_.rt->describe(e);
  }
  expected_bytes_ = expected_bytes;
  if (blob.empty()) {  // the reference's buffers on the device come later (keep_case)
    if (int e = api.memset(expected_, 0, expected_bytes_, place_.stream); e != 0) return "clearing: " + place_.rt->describe(e);
    if (int e = api.stream_synchronize(place_.stream); e != 0) return "clearing: " + place_.rt->describe(e);
  } else if (int e = api.memcpy_h2d(expected_, blob.data(), blob.size()); e != 0) {
    return "copying the reference's buffers: " + place_.rt->describe(e);
  }
  for (const auto& i : items)
    if (i.expected_offset + i.bytes > expected_bytes_) return "a check reaches past the reference's buffers";
  items_ = std::move(items);
  return "";
}

std::string DeviceChecker::expect(UniqueFd expected) {
  if (!place_.rt || !expected_) return "nothing is watched";
  if (!expected) {  // the case's buffers, kept since watch()
    other_in_use_ = false;
    return "";
  }
  other_in_use_ = false;
  auto blob = SealedBlob::adopt(std::move(expected), expected_bytes_);
  if (!blob) return "the reference's buffers: " + blob.error().message;
  if (auto e = other_ready(); !e.empty()) return e;
  if (int e = place_.rt->api().memcpy_h2d(other_, blob->data(), expected_bytes_); e != 0)
    return "copying the reference's buffers: " + place_.rt->describe(e);
  other_in_use_ = true;
  return "";
}

std::string DeviceChecker::other_ready() {
  if (other_) return "";
  if (int e = place_.rt->api().malloc(&other_, expected_bytes_); e != 0) {
    other_ = nullptr;
    return "allocating the reference's other buffers: " + place_.rt->describe(e);
  }
  return "";
}

std::string DeviceChecker::watch_reference(int k, std::size_t bytes, std::size_t offset, std::size_t size, UniqueFd fd) {
  if (!place_.rt || !expected_) return "nothing is watched";
  if (!fd) return "no descriptor came with the reference's mirror";
  if (reference_.count(k)) return fmt::format("the reference's mirror {} is watched already", k);
  if (size > bytes || offset + size > expected_bytes_) return fmt::format("the reference's mirror {} does not fit its region", k);
  void* p = nullptr;
  if (int e = place_.rt->api().import_shareable(fd.get(), bytes, &p); e != 0) return "mapping the reference's mirror: " + place_.rt->describe(e);
  reference_[k] = {p, bytes, offset, size};
  return "";
}

std::string DeviceChecker::keep_case() {
  if (!place_.rt || !expected_) return "nothing is watched";
  if (reference_.empty()) return "the reference's buffers are not watched";
  other_in_use_ = false;
  zeros_pass_.reset();  // the case's buffers change
  return copy_reference(expected_, 0);
}

std::string DeviceChecker::stage(int inputs) {
  if (!place_.rt || !expected_) return "nothing is watched";
  other_in_use_ = false;
  if (auto e = other_ready(); !e.empty()) return e;
  if (auto e = copy_reference(other_, inputs); !e.empty()) return e;
  other_in_use_ = true;
  return "";
}

std::string DeviceChecker::copy_reference(void* to, int inputs) {
  const auto& api = place_.rt->api();
  for (const auto& [k, r] : reference_) {
    if (int e = api.memcpy_d2d(static_cast<uint8_t*>(to) + r.offset, r.ptr, r.size, place_.stream); e != 0)
      return "copying the reference's buffers: " + place_.rt->describe(e);
    if (k >= inputs) continue;
    auto m = mirrors_.find(k);
    if (m == mirrors_.end() || m->second.second < r.size) return fmt::format("mirror {} is not watched whole", k);
    if (int e = api.memcpy_d2d(m->second.first, r.ptr, r.size, place_.stream); e != 0) return "copying the inputs: " + place_.rt->describe(e);
  }
  for (int k = 0; k < inputs; ++k)
    if (!reference_.count(k)) return fmt::format("the reference's mirror {} is not watched", k);
  if (int e = api.stream_synchronize(place_.stream); e != 0) return "copying the reference's buffers: " + place_.rt->describe(e);
  return "";
}

std::string DeviceChecker::watch_mirror(int k, std::size_t bytes, UniqueFd fd) {
  if (!place_.rt) return "nothing is watched";
  if (!fd) return "no descriptor came with the mirror";
  if (mirrors_.count(k)) return fmt::format("mirror {} is watched already", k);
  void* p = nullptr;
  if (int e = place_.rt->api().import_shareable(fd.get(), bytes, &p); e != 0) return "mapping the mirror: " + place_.rt->describe(e);
  mirrors_[k] = {p, bytes};
  return "";
}

std::string DeviceChecker::keep_sample() {
  if (!place_.rt || !expected_) return "nothing is watched";
  if (reference_.empty()) return "the reference's buffers are not watched";
  const auto& api = place_.rt->api();
  if (!kept_) {
    if (int e = api.malloc(&kept_, expected_bytes_); e != 0) {
      kept_ = nullptr;
      return "allocating the kept sample's buffers: " + place_.rt->describe(e);
    }
  }
  for (const auto& [k, r] : reference_) {  // region k of the blobs is mirror k's (no in-place output on a device case)
    auto m = mirrors_.find(k);
    if (m == mirrors_.end() || m->second.second < r.size) return fmt::format("mirror {} is not watched whole", k);
    if (int e = api.memcpy_d2d(static_cast<uint8_t*>(kept_) + r.offset, m->second.first, r.size, place_.stream); e != 0)
      return "keeping the sample's buffers: " + place_.rt->describe(e);
  }
  if (int e = api.stream_synchronize(place_.stream); e != 0) return "keeping the sample's buffers: " + place_.rt->describe(e);
  have_kept_ = true;
  return "";
}

Expected<SealedBlob> DeviceChecker::kept_blob() {
  if (!place_.rt || !kept_ || !have_kept_) return make_error("no sample is kept");
  std::string error;
  auto blob = SealedBlob::create(expected_bytes_, [&](uint8_t* p) {
    if (int e = place_.rt->api().memcpy_d2h(p, kept_, expected_bytes_); e != 0) error = "copying the kept sample home: " + place_.rt->describe(e);
  }, "bb-kept-sample");
  if (!error.empty()) return make_error(error);
  return blob;
}

DeviceChecker::Verdict DeviceChecker::verify(bool figures, bool kept) {
  Verdict v;
  if (!place_.rt || !expected_) {
    v.error = "nothing is watched";
    return v;
  }
  if (kept && !have_kept_) {
    v.error = "no sample is kept";
    return v;
  }
  const auto& api = place_.rt->api();
  const auto* expected = static_cast<const uint8_t*>(other_in_use_ ? other_ : expected_);
  bool zeros_pass = true;
  for (const auto& i : items_) {
    auto m = mirrors_.find(i.mirror);
    if (m == mirrors_.end() || i.offset + i.bytes > m->second.second) {
      v.error = fmt::format("mirror {} is not watched whole", i.mirror);
      return v;
    }
    // The kept copy is laid out as the blobs: an item's bytes lie where the expected ones do.
    const auto* got = kept ? static_cast<const uint8_t*>(kept_) + i.expected_offset : static_cast<const uint8_t*>(m->second.first) + i.offset;
    if (i.close) {
      // The scale of what is expected: for a scaled atol, and whether zeros would pass (once).
      ExpectedScale scale;
      const bool zeros_asked = !other_in_use_ && !zeros_pass_;
      if (i.scale_atol || zeros_asked) {
        int nonfinite = 0;
        if (int e = api.expected_scale(i.code, i.bits, expected + i.expected_offset, i.n, &scale.max_abs, &nonfinite); e != 0) {
          v.error = "the scale of the expected values, on the device: " + place_.rt->describe(e);
          return v;
        }
        scale.nonfinite = nonfinite != 0;
      }
      const Tolerance tol{i.atol, i.rtol, i.scale_atol};
      zeros_pass = zeros_pass && zeros_would_pass(tol, scale);
      unsigned long long bad = 0;
      if (int e = api.mismatches(i.code, i.bits, got, expected + i.expected_offset, i.n, effective_atol(tol, scale), i.rtol, &bad); e != 0) {
        v.error = "comparing on the device: " + place_.rt->describe(e);
        return v;
      }
      // How close it came (a runtime before version 8 cannot say: no figures).
      if (figures && api.struct_size >= offsetof(bb_device_runtime, error_figures) + sizeof(api.error_figures) && api.error_figures) {
        double max_abs = 0, max_rel = 0, used = 0;
        if (int e = api.error_figures(i.code, i.bits, got, expected + i.expected_offset, i.n, effective_atol(tol, scale), i.rtol, &max_abs, &max_rel, &used);
            e != 0) {
          v.error = "the error figures, on the device: " + place_.rt->describe(e);
          return v;
        }
        ErrorFigures& f = v.errors ? *v.errors : v.errors.emplace();
        f.max_abs_error = std::max(f.max_abs_error, max_abs);
        f.max_rel_error = std::max(f.max_rel_error, max_rel);
        if (f.output.empty() || used > f.tolerance_used) f.output = i.output, f.tolerance_used = used;
      }
      if (bad) {
        v.why = fmt::format("buffer {}: {} of {} elements not close", i.mirror, bad, i.n);
        return v;
      }
    } else {
      int differ = 0;
      if (int e = api.bytes_differ(got, expected + i.expected_offset, i.bytes, &differ); e != 0) {
        v.error = "comparing on the device: " + place_.rt->describe(e);
        return v;
      }
      if (differ) {
        v.why = fmt::format("buffer {}: bytes {}..{} differ", i.mirror, i.offset, i.offset + i.bytes);
        return v;
      }
    }
  }
  if (!other_in_use_ && !zeros_pass_) zeros_pass_ = zeros_pass;
  v.zeros_pass = zeros_pass_;
  v.ok = true;
  return v;
}

void DeviceChecker::unwatch() {
  if (place_.rt) {
    for (auto& [k, m] : mirrors_) place_.rt->api().free(m.first);
    for (auto& [k, r] : reference_) place_.rt->api().free(r.ptr);
    if (expected_) place_.rt->api().free(expected_);
    if (other_) place_.rt->api().free(other_);
    if (kept_) place_.rt->api().free(kept_);
  }
  kept_ = nullptr;
  have_kept_ = false;
  mirrors_.clear();
  reference_.clear();
  expected_ = nullptr;
  other_ = nullptr;
  other_in_use_ = false;
  expected_bytes_ = 0;
  items_.clear();
  zeros_pass_.reset();
}

}  // namespace bb
