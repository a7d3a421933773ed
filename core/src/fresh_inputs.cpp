#include "fresh_inputs.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "init.hpp"
#include "message_channel.hpp"
#include "parallel.hpp"

namespace bb {

std::vector<std::string> repeating_inputs(const ConcreteCase& c) {
  std::vector<std::string> names;
  for (const auto& t : c.inputs)
    switch (t.init.kind) {
      case InitKind::randn:
      case InitKind::uniform:
      case InitKind::randint:
        break;
      case InitKind::ones:
      case InitKind::zeros:
      case InitKind::arange:
      case InitKind::full:
      case InitKind::npy:
        names.push_back(t.name);
    }
  return names;
}

std::string fresh_salt(bool baseline, std::size_t block, std::size_t sample) {
  return fmt::format("fresh-{}-{}-{}", baseline ? "baseline" : "impl", block, sample);
}

FreshInputs::~FreshInputs() {
  for (bool baseline : {false, true}) {
    Side& s = side(baseline);
    if (s.server.joinable()) end(baseline);
    if (s.base) munmap(s.base, layout_.total);
  }
}

std::string FreshInputs::attach(bool baseline, Executor& worker, const std::string& session, double timeout) {
  Side& s = side(baseline);
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return fmt::format("socketpair: {}", std::strerror(errno));
  UniqueFd mine(pair[0]), theirs(pair[1]);
  UniqueFd stage(memfd_create("bb-fresh-stage", MFD_CLOEXEC));
  if (!stage || ftruncate(stage.get(), static_cast<off_t>(layout_.total)) != 0) return fmt::format("the stage: {}", std::strerror(errno));
  void* p = mmap(nullptr, layout_.total, PROT_READ | PROT_WRITE, MAP_SHARED, stage.get(), 0);
  if (p == MAP_FAILED) return fmt::format("the stage could not be mapped: {}", std::strerror(errno));
  if (!send_packet(mine.get(), "stage", {stage.get()})) {
    munmap(p, layout_.total);
    return "the stage could not be sent";
  }
  ExecOutcome out = worker.execute({{"cmd", "pace"}, {"session", session}}, timeout, theirs.get());
  if (out.status != ExecOutcome::Status::ok || !out.reply.value("error", "").empty()) {
    munmap(p, layout_.total);
    return out.status != ExecOutcome::Status::ok ? "its worker: " + out.detail : out.reply.value("error", "");
  }
  if (s.base) munmap(s.base, layout_.total);
  s.base = static_cast<uint8_t*>(p);
  s.pacing = std::move(mine);
  return "";
}

std::string FreshInputs::make(Side& s, const std::string& salt) {
  for (std::size_t i = 0; i < c_.inputs.size(); ++i) {
    const auto& t = c_.inputs[i];
    if (auto r = fill_tensor(t, s.base + layout_.inputs.offsets[i], mix_seed(secret_, salt + ":" + t.name), dir_); !r)
      return r.error().message;
  }
  return "";
}

std::optional<FreshInputs::Kept> FreshInputs::keep(Side& s, std::size_t sample, const std::string& salt) {
  const uint8_t* from = s.base + layout_.buffers_at;
  auto blob = SealedBlob::create(layout_.buffers.total, [&](uint8_t* p) { parallel_copy(p, from, layout_.buffers.total); }, "bb-fresh-kept");
  if (!blob) return std::nullopt;
  return Kept{sample, salt, std::move(*blob)};
}

void FreshInputs::serve(Side& s, bool baseline, std::size_t block, std::optional<std::size_t> check) {
  Served& out = s.served;
  std::size_t next = 0;  // the sample whose inputs are asked for next
  std::string previous_salt;
  for (;;) {
    pollfd fds[2] = {{s.pacing.get(), POLLIN, 0}, {s.stop_read.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      out.error = fmt::format("poll: {}", std::strerror(errno));
      break;
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) return;  // stopped: the block's reply came
    char what = 0;
    const ssize_t n = recv(s.pacing.get(), &what, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;  // its worker is gone: the block's reply says how
    const bool done = what == kFreshDone || what == kFreshLast;
    if ((what == kFreshReady) != (next == 0) || (!done && what != kFreshReady)) {
      out.error = fmt::format("its worker paced sample {} out of turn (byte {})", next, static_cast<int>(what));
      break;
    }
    // The buffers of the sample just ended, where it is the one picked (or the block's last, and
    // none was picked before it).
    if (done && check && !out.kept && (next - 1 == *check || what == kFreshLast)) out.kept = keep(s, next - 1, previous_salt);
    if (what == kFreshLast) return;
    const auto t0 = std::chrono::steady_clock::now();
    previous_salt = fresh_salt(baseline, block, next);
    if (std::string e = make(s, previous_salt); !e.empty()) {
      out.error = "inputs: " + e;
      break;
    }
    out.make_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++out.samples;
    ++next;
    const char go = kFreshGo;
    if (send(s.pacing.get(), &go, 1, MSG_NOSIGNAL) != 1) return;
  }
  shutdown(s.pacing.get(), SHUT_RDWR);  // its worker stops waiting: the block ends in an error
}

void FreshInputs::begin(bool baseline, std::size_t block, std::optional<std::size_t> check) {
  Side& s = side(baseline);
  if (s.server.joinable()) end(baseline);
  s.served = Served{};
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    s.served.error = fmt::format("pipe: {}", std::strerror(errno));
    return;
  }
  s.stop_read.reset(p[0]);
  s.stop_write.reset(p[1]);
  s.server = std::thread([this, &s, baseline, block, check] { serve(s, baseline, block, check); });
}

FreshInputs::Served FreshInputs::end(bool baseline) {
  Side& s = side(baseline);
  if (s.server.joinable()) {
    const char stop = 0;
    if (write(s.stop_write.get(), &stop, 1) != 1) {
    }
    s.server.join();
  }
  s.stop_read.reset();
  s.stop_write.reset();
  return std::move(s.served);
}

}  // namespace bb
