#include "run/blob_cache.hpp"

#include <algorithm>

#include "devices/host_info.hpp"

namespace bb {

std::shared_ptr<const SealedBlob> BlobCache::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = blobs_.find(key);
  return it == blobs_.end() ? nullptr : it->second;
}

std::shared_ptr<const SealedBlob> BlobCache::keep(const std::string& key, SealedBlob blob) {
  auto shared = std::make_shared<const SealedBlob>(std::move(blob));
  std::lock_guard lock(mutex_);
  if (auto it = blobs_.find(key); it != blobs_.end()) return it->second;  // another thread's, the same bytes
  if (bytes_ + shared->size() <= capacity_) {
    blobs_.emplace(key, shared);
    bytes_ += shared->size();
  }
  return shared;
}

std::size_t BlobCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

BlobCache& BlobCache::shared() {
  static BlobCache cache(std::min<std::size_t>(physical_memory_bytes() / 8, std::size_t{8} << 30));
  return cache;
}

}  // namespace bb
