#include "device_check.hpp"

#include <fmt/format.h>

#include "allclose.hpp"
#include "host_buffer.hpp"
#include "worker_protocol.hpp"

namespace bb {

nlohmann::json to_json(const std::vector<DeviceCheckItem>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& i : items)
    a.push_back({{"mirror", i.mirror}, {"offset", i.offset}, {"bytes", i.bytes}, {"expected_offset", i.expected_offset},
                 {"close", i.close}, {"code", i.code}, {"bits", i.bits}, {"n", i.n}, {"atol", i.atol}, {"rtol", i.rtol}, {"scale_atol", i.scale_atol}, {"output", i.output}});
  return a;
}

std::vector<DeviceCheckItem> device_check_items_from_json(const nlohmann::json& j) {
  std::vector<DeviceCheckItem> items;
  if (!j.is_array()) return items;
  for (const auto& e : j) {
    if (!e.is_object()) continue;
    DeviceCheckItem i;
    i.mirror = e.value("mirror", -1);
    i.offset = e.value("offset", std::size_t{0});
    i.bytes = e.value("bytes", std::size_t{0});
    i.expected_offset = e.value("expected_offset", std::size_t{0});
    i.close = e.value("close", false);
    i.code = e.value("code", uint8_t{0});
    i.bits = e.value("bits", uint8_t{0});
    i.n = e.value("n", std::size_t{0});
    i.atol = e.value("atol", 0.0);
    i.rtol = e.value("rtol", 0.0);
    i.scale_atol = e.value("scale_atol", false);
    i.output = e.value("output", "");
    items.push_back(i);
  }
  return items;
}

int mirror_count(const ConcreteCase& c) {
  int k = static_cast<int>(c.inputs.size());
  for (const auto& o : c.outputs) k += o.inplace_input >= 0 ? 0 : 1;
  return k;
}

std::optional<std::vector<DeviceCheckItem>> device_checks(const ConcreteCase& c) {
  constexpr std::size_t g = HostBuffer::kGuardBytes;
  const BlobLayout l = buffers_layout(c);
  std::vector<DeviceCheckItem> items;
  auto same = [&](int mirror, std::size_t offset, std::size_t bytes, std::size_t expected) {
    items.push_back(DeviceCheckItem{mirror, offset, bytes, expected, false, 0, 0, 0, 0, 0, false, ""});
  };
  // A tensor's data within tolerance, its guards byte for byte.
  auto close = [&](int mirror, std::size_t region, const ConcreteOutput& o) -> bool {
    if (!is_floating(o.dtype)) return false;
    const DLDataType dl = to_dlpack(o.dtype);
    same(mirror, 0, g, l.offsets[region]);
    same(mirror, g + o.nbytes(), g, l.offsets[region] + g + o.nbytes());
    items.push_back(DeviceCheckItem{mirror, g, o.nbytes(), l.offsets[region] + g, true, dl.code, dl.bits, static_cast<std::size_t>(o.numel()),
                                    o.tolerance.atol, o.tolerance.rtol, o.tolerance.scale_atol, o.name});
    return true;
  };
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const ConcreteOutput* target = nullptr;  // the in-place output that lands here
    for (const auto& o : c.outputs)
      if (o.inplace_input == static_cast<int>(i)) target = &o;
    if (!target) {
      same(static_cast<int>(i), 0, l.sizes[i], l.offsets[i]);  // unchanged, guards and all
    } else if (!close(static_cast<int>(i), i, *target)) {
      return std::nullopt;
    }
  }
  int mirror = static_cast<int>(c.inputs.size());
  for (std::size_t j = 0; j < c.outputs.size(); ++j) {
    const auto& o = c.outputs[j];
    if (o.inplace_input >= 0) continue;
    if (!close(mirror++, c.inputs.size() + j, o)) return std::nullopt;
  }
  return items;
}

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
