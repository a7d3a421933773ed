// The checker worker's side of the device check (device_check.hpp): a worker that holds no
// plugin maps the implementation's and the reference's device buffers (shareable memory, a file
// descriptor each, through the host) and compares them where they are, after each timed block
// and each checked call. It serves "watch", "watch_mirror", "watch_reference", "stage",
// "keep_case", "expect", "verify", "keep_sample", "verify_kept" (stage(0), verify(kept),
// expect()), "kept_home" and "unwatch" (worker_protocol.hpp; request_server.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expected.hpp"
#include "protocol/sealed_blob.hpp"
#include "protocol/worker_protocol.hpp"
#include "results.hpp"
#include "run/device_check.hpp"
#include "worker/bound_call.hpp"

namespace bb {

class DeviceChecker {
 public:
  ~DeviceChecker() { unwatch(); }
  // The reference's buffers (a sealed blob of `expected_bytes` at least) copied to `place`'s
  // device, and the checks to run; whatever was watched before is let go. No blob: room for
  // `expected_bytes`, filled from the reference's mirrors on the device (keep_case).
  std::string watch(const ExecPlace& place, std::vector<DeviceCheckItem> items, UniqueFd expected, std::size_t expected_bytes);
  // Mirror k of the implementation's call: `bytes` of shareable memory behind `fd`.
  std::string watch_mirror(int k, std::size_t bytes, UniqueFd fd);
  // Other buffers of the reference to compare with from now on (a checked call's): a sealed blob
  // as large as the one watched, copied to a second device buffer; no descriptor: the case's
  // buffers again (kept since watch: nothing is copied). The mirrors stay.
  std::string expect(UniqueFd expected);
  // Mirror k of the reference's call (its prepared call's buffers, shareable as the implementation's
  // are): `bytes` of memory behind `fd`, and the region [offset, offset + size) of the blobs the
  // checker compares with (buffers_layout) that its buffer fills.
  std::string watch_reference(int k, std::size_t bytes, std::size_t offset, std::size_t size, UniqueFd fd);
  // A checked call whose inputs the reference made on the device (no in-place output): the
  // reference's buffers after its call become those compared with, as expect() with a blob makes
  // them, and its first `inputs` mirrors (the inputs it made, guards and all) are copied into the
  // implementation's, for its next call. Nothing crosses to the host.
  std::string stage(int inputs);
  // A device case (the reference made its inputs there too): the reference's buffers after its
  // call on the case's inputs become the case's, compared with from now on.
  std::string keep_case();
  // Every check held (ok), else which failed (why); an error where the device could not say;
  // zeros_pass and errors where asked (the protocol's VerifyReply: the reply is the verdict).
  using Verdict = VerifyReply;

  // `kept`: the buffers keep_sample() copied, not the implementation's as they are now.
  Verdict verify(bool figures = false, bool kept = false);
  void unwatch();

  // A timed sample on fresh inputs, kept in secret (fresh_inputs_protocol.hpp): the
  // implementation's buffers as its call left them, copied into the checker's own memory (laid
  // out as the blobs), in place of the sample kept before. Needs the reference's mirrors
  // watched (they say where each region lies). "" or why not.
  std::string keep_sample();
  // The kept sample's buffers, home for the host's judgement (buffers_layout).
  Expected<SealedBlob> kept_blob();

 private:
  ExecPlace place_;
  void* expected_ = nullptr;  // the case's
  void* other_ = nullptr;     // a checked call's (expect)
  void* kept_ = nullptr;      // a timed sample's buffers (keep_sample)
  bool have_kept_ = false;
  bool other_in_use_ = false;
  std::size_t expected_bytes_ = 0;
  std::vector<DeviceCheckItem> items_;
  std::optional<bool> zeros_pass_;  // of the case's expected buffers, once known
  std::map<int, std::pair<void*, std::size_t>> mirrors_;  // k -> (mapping, bytes)
  struct ReferenceMirror {
    void* ptr;
    std::size_t bytes, offset, size;
  };
  std::map<int, ReferenceMirror> reference_;  // k -> the reference's mirror k (watch_reference)
  std::string other_ready();  // other_ allocated
  // The reference's mirrors into `to` (laid out as the blobs), its first `inputs` into the
  // implementation's mirrors too.
  std::string copy_reference(void* to, int inputs);
};

}  // namespace bb
