// Lines of JSON over a Unix stream socket, each with at most one file descriptor beside it
// (SCM_RIGHTS): the worker protocol's transport, both ways. And whole messages over a
// SOCK_SEQPACKET socket, each with up to four descriptors: the warm interpreter's
// (python_zygote.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/sealed_blob.hpp"

namespace bb {

// Sends `line` (a newline is added) and, when fd >= 0, a copy of fd with its first byte.
// False when the peer is gone.
bool send_line(int sock, const std::string& line, int fd = -1);

// One message (up to kMaxPacket bytes) and copies of `fds`. False when the peer is gone.
inline constexpr std::size_t kMaxPacket = 1 << 20;
bool send_packet(int sock, const std::string& text, const std::vector<int>& fds = {});
// Room in `sock`'s send buffer for a whole packet (a worker's environment can be large): forced
// where this process may, else as much as the system's limit allows.
void make_room_for_packets(int sock);
// The next message and the descriptors that came with it (close-on-exec); nullopt at the end of
// the stream or on an error.
std::optional<std::pair<std::string, std::vector<UniqueFd>>> receive_packet(int sock);

class LineReader {
 public:
  explicit LineReader(int sock) : sock_(sock) {}
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  // One recvmsg: > 0 bytes read, 0 at the end of the stream, < 0 on an error (errno set;
  // EAGAIN / EINTR: try again).
  long read_some();
  // The next whole line, with the descriptor that came with it; nullopt until one is complete.
  std::optional<std::pair<std::string, UniqueFd>> next_line();
  void clear();

 private:
  int sock_;
  std::string buffer_;
  std::vector<std::pair<std::size_t, int>> fds_;  // (offset in buffer_ of the first byte it came with, fd)
};

}  // namespace bb
