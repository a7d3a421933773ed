// Bytes handed from one process to another that neither side can change once handed over: a
// memfd sealed against writes, growth and shrinking (the kernel enforces the seals), mapped
// read-only by the receiver. Inputs travel host -> worker and a call's buffers worker -> host
// this way, so a plugin cannot rewrite what the host judges after the host has it, nor the
// pristine inputs a block restores from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "expected.hpp"

namespace bb {

// A file descriptor owned by one object.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

class SealedBlob {
 public:
  SealedBlob() = default;
  ~SealedBlob();
  SealedBlob(SealedBlob&& o) noexcept;
  SealedBlob& operator=(SealedBlob&& o) noexcept;
  SealedBlob(const SealedBlob&) = delete;
  SealedBlob& operator=(const SealedBlob&) = delete;

  // A new blob of `size` bytes, written by `fill` through a writable mapping that is gone
  // before the seals are added.
  static Expected<SealedBlob> create(std::size_t size, const std::function<void(uint8_t*)>& fill, const char* name = "bb-blob");
  // Takes a blob received from another process: its seals must forbid writes, growth and
  // shrinking, and it must hold at least `min_size` bytes.
  static Expected<SealedBlob> adopt(UniqueFd fd, std::size_t min_size);

  const uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_.get(); }
  bool empty() const { return data_ == nullptr; }

 private:
  UniqueFd fd_;
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace bb
