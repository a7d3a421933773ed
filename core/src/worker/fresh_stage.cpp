#include "worker/fresh_stage.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "protocol/message_channel.hpp"
#include "protocol/worker_protocol.hpp"

namespace bb {

FreshStage::~FreshStage() {
  if (base_) munmap(base_, bytes_);
  if (previous_) munmap(previous_, bytes_);
}

std::string FreshStage::attach(UniqueFd pacing, const ConcreteCase& c) {
  if (!pacing) return "no pacing socket came with the request";
  pacing_ = std::move(pacing);
  bytes_ = buffers_layout(c).total;
  return "";
}

std::string FreshStage::next_stage() {
  auto packet = receive_packet(pacing_.get());
  if (!packet || packet->second.size() != 1) return "the block's stage did not come over the pacing socket";
  struct stat st {};
  const int fd = packet->second[0].get();
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes_)
    return fmt::format("the stage holds {} bytes, not the {} its case needs", st.st_size, bytes_);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fmt::format("the stage could not be mapped: {}", std::strerror(errno));
  if (previous_) {  // the last swap did not happen: the stage it brought is nobody's
    if (base_) munmap(base_, bytes_);
  } else {
    previous_ = base_;
  }
  base_ = static_cast<uint8_t*>(p);
  return "";
}

void FreshStage::release_previous() {
  if (previous_) munmap(previous_, bytes_);
  previous_ = nullptr;
}

std::string FreshStage::tell(char what) {
  if (send(pacing_.get(), &what, 1, MSG_NOSIGNAL) != 1) return fmt::format("the host's pacing socket: {}", std::strerror(errno));
  return "";
}

std::string FreshStage::next(bool first) {
  if (std::string e = tell(first ? kFreshReady : kFreshDone); !e.empty()) return e;
  char go = 0;
  for (;;) {
    const ssize_t n = recv(pacing_.get(), &go, 1, 0);
    if (n == 1 && go == kFreshGo) return "";
    if (n < 0 && errno == EINTR) continue;
    return n == 0 ? "the host closed the pacing socket" : fmt::format("the host's pacing socket sent byte {}, not its go", static_cast<int>(go));
  }
}

std::string FreshStage::next_seed(bool first, uint64_t* seed) {
  if (std::string e = tell(first ? kFreshReady : kFreshDone); !e.empty()) return e;
  char go[kFreshSeedGoBytes + 1] = {};
  // The go comes within tens of microseconds: awaited spinning a little first (a sleeping
  // thread's wake-up is most of the round trip), then asleep.
  const auto spin = std::chrono::steady_clock::now();
  for (;;) {
    const bool spinning = std::chrono::steady_clock::now() - spin < std::chrono::microseconds(100);
    const ssize_t n = recv(pacing_.get(), go, sizeof go, spinning ? MSG_DONTWAIT : 0);
    if (n < 0 && spinning && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == static_cast<ssize_t>(kFreshSeedGoBytes) && go[0] == kFreshGo) {
      std::memcpy(seed, go + 1, sizeof *seed);
      return "";
    }
    if (n < 0 && errno == EINTR) continue;
    return n == 0 ? "the host closed the pacing socket" : fmt::format("the host's pacing socket sent {} bytes, not its go and a seed", n);
  }
}

std::string FreshStage::last() { return tell(kFreshLast); }

}  // namespace bb
