// What a run makes once per case and every implementation of the op reuses: the case's inputs
// and the reference's buffers for them, as sealed blobs (sealed_blob.hpp: no worker can change
// them). Shared by the worker pool's threads; bounded in bytes, and a blob that does not fit is
// not kept (a sweep visits an op's cases in the same order for each implementation: keeping the
// first ones serves every later pass, where evicting the oldest would serve none).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "protocol/sealed_blob.hpp"

namespace bb {

class BlobCache {
 public:
  explicit BlobCache(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  // The blob kept under `key`, or null.
  std::shared_ptr<const SealedBlob> find(const std::string& key) const;
  // Keeps `blob` under `key` if it fits (returns it either way, shared).
  std::shared_ptr<const SealedBlob> keep(const std::string& key, SealedBlob blob);
  std::size_t bytes() const;

  // The run's cache: an eighth of this machine's memory, 8 GiB at most.
  static BlobCache& shared();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const SealedBlob>> blobs_;
  std::size_t capacity_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace bb
