#include "protocol/sealed_blob.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "run/workers/fork_guard.hpp"

namespace bb {

namespace {
constexpr int kSeals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

SealedBlob::~SealedBlob() {
  if (data_ && size_) munmap(const_cast<uint8_t*>(data_), size_);
}

SealedBlob::SealedBlob(SealedBlob&& o) noexcept : fd_(std::move(o.fd_)), data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

SealedBlob& SealedBlob::operator=(SealedBlob&& o) noexcept {
  if (this != &o) {
    if (data_ && size_) munmap(const_cast<uint8_t*>(data_), size_);
    fd_ = std::move(o.fd_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Expected<SealedBlob> SealedBlob::create(std::size_t size, const std::function<void(uint8_t*)>& fill, const char* name) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return make_error(fmt::format("memfd_create: {}", std::strerror(errno)));
  const std::size_t mapped = size ? size : 1;
  if (ftruncate(fd.get(), static_cast<off_t>(mapped)) != 0) return make_error(fmt::format("memfd of {} bytes: {}", size, std::strerror(errno)));
  void* p = MAP_FAILED;
  {
    // A process forked by another thread (a worker being started) must not inherit the writable
    // mapping: it would keep the seal from being added for as long as it lives (fork_guard.hpp).
    const ForkFreeWindow no_fork;
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p != MAP_FAILED) madvise(p, mapped, MADV_DONTFORK);
  }
  if (p == MAP_FAILED) return make_error(fmt::format("mapping {} bytes: {}", size, std::strerror(errno)));
  if (size) fill(static_cast<uint8_t*>(p));
  munmap(p, mapped);  // F_SEAL_WRITE needs every writable shared mapping gone
  int sealed = -1;
  for (int attempt = 0; attempt < 100 && sealed != 0; ++attempt) {  // EBUSY: pages the kernel still holds
    sealed = fcntl(fd.get(), F_ADD_SEALS, kSeals | F_SEAL_SEAL);
    if (sealed != 0 && errno != EBUSY) break;
    if (sealed != 0) usleep(1000);
  }
  if (sealed != 0) return make_error(fmt::format("sealing a memfd: {}", std::strerror(errno)));
  return adopt(std::move(fd), size);
}

Expected<SealedBlob> SealedBlob::adopt(UniqueFd fd, std::size_t min_size) {
  if (!fd) return make_error("no file descriptor came with the message");
  const int seals = fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0) return make_error(fmt::format("the descriptor is no sealable memfd ({})", std::strerror(errno)));
  if ((seals & kSeals) != kSeals) return make_error("the memfd is not sealed against writes, growth and shrinking");
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return make_error(fmt::format("fstat: {}", std::strerror(errno)));
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < min_size) return make_error(fmt::format("the memfd holds {} bytes, {} expected", size, min_size));
  SealedBlob b;
  if (size) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED) return make_error(fmt::format("mapping a received memfd: {}", std::strerror(errno)));
    b.data_ = static_cast<const uint8_t*>(p);
  }
  b.size_ = size;
  b.fd_ = std::move(fd);
  return b;
}

}  // namespace bb
