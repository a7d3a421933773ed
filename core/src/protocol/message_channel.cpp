#include "protocol/message_channel.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bb {

bool send_line(int sock, const std::string& line, int fd) {
  const std::string data = line + "\n";
  std::size_t off = 0;
  while (off < data.size()) {
    iovec iov{const_cast<char*>(data.data() + off), data.size() - off};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (off == 0 && fd >= 0) {
      std::memset(control, 0, sizeof control);
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    const ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {
// One recvmsg into `data`, with room for eight descriptors beside it: the bytes read (-1 with
// errno set on an error), the descriptors that came (now the caller's), and whether the message
// or its descriptors were cut short.
struct Received {
  ssize_t bytes = -1;
  std::vector<int> fds;
  bool truncated = false;
};
Received receive_into(int sock, char* data, std::size_t capacity) {
  iovec iov{data, capacity};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  Received r;
  r.bytes = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (r.bytes < 0) return r;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t k = 0; k < count; ++k) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
      r.fds.push_back(fd);
    }
  }
  r.truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  return r;
}
}  // namespace

void make_room_for_packets(int sock) {
  const int bytes = static_cast<int>(2 * kMaxPacket);
  if (setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0) setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

bool send_packet(int sock, const std::string& text, const std::vector<int>& fds) {
  if (fds.size() > 4 || text.size() > kMaxPacket) {
    errno = EMSGSIZE;
    return false;
  }
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  if (!fds.empty()) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(text.size());
}

std::optional<std::pair<std::string, std::vector<UniqueFd>>> receive_packet(int sock) {
  std::string text(kMaxPacket, '\0');
  Received r;
  while ((r = receive_into(sock, text.data(), text.size())).bytes < 0 && errno == EINTR) {
  }
  std::vector<UniqueFd> fds;
  for (int fd : r.fds) fds.emplace_back(fd);
  if (r.bytes <= 0 || r.truncated) return std::nullopt;
  text.resize(static_cast<std::size_t>(r.bytes));
  return std::pair{std::move(text), std::move(fds)};
}

LineReader::~LineReader() { clear(); }

void LineReader::clear() {
  for (auto& [at, fd] : fds_) close(fd);
  fds_.clear();
  buffer_.clear();
}

long LineReader::read_some() {
  char chunk[65536];
  const Received r = receive_into(sock_, chunk, sizeof chunk);
  if (r.bytes < 0) return -1;
  for (int fd : r.fds) fds_.emplace_back(buffer_.size(), fd);
  buffer_.append(chunk, static_cast<std::size_t>(r.bytes));
  return static_cast<long>(r.bytes);
}

std::optional<std::pair<std::string, UniqueFd>> LineReader::next_line() {
  const auto nl = buffer_.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::pair<std::string, UniqueFd> out{buffer_.substr(0, nl), UniqueFd()};
  buffer_.erase(0, nl + 1);
  std::vector<std::pair<std::size_t, int>> rest;
  for (auto& [at, fd] : fds_) {
    if (at <= nl) {
      if (!out.second) out.second.reset(fd);
      else close(fd);  // one descriptor per line: any other is not ours to keep
    } else {
      rest.emplace_back(at - (nl + 1), fd);
    }
  }
  fds_ = std::move(rest);
  return out;
}

}  // namespace bb
