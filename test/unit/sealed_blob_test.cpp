// Bytes handed between processes (sealed_blob.hpp, message_channel.hpp): the receiver maps what
// the sender wrote, nobody can write it afterwards, an unsealed memfd is refused, and a blob
// crosses a socket beside its line.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "protocol/message_channel.hpp"
#include "protocol/sealed_blob.hpp"
#include "run/workers/fork_guard.hpp"

TEST(SealedBlob, WhatIsWrittenIsWhatIsReadAndNoOneWritesItAfter) {
  auto blob = bb::SealedBlob::create(10000, [](uint8_t* p) {
    for (int i = 0; i < 10000; ++i) p[i] = static_cast<uint8_t>(i * 7);
  });
  ASSERT_TRUE(blob) << blob.error().message;
  auto got = bb::SealedBlob::adopt(bb::UniqueFd(dup(blob->fd())), 10000);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->size(), 10000u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(got->data()[i], static_cast<uint8_t>(i * 7));
  // The seals: no writable shared mapping, no write(2), no resize.
  EXPECT_EQ(mmap(nullptr, 10000, PROT_READ | PROT_WRITE, MAP_SHARED, got->fd(), 0), MAP_FAILED);
  EXPECT_LT(pwrite(got->fd(), "x", 1, 0), 0);
  EXPECT_NE(ftruncate(got->fd(), 100), 0);
  // Too small for what the receiver expects.
  EXPECT_FALSE(bb::SealedBlob::adopt(bb::UniqueFd(dup(blob->fd())), 10001));
}

TEST(SealedBlob, AnUnsealedMemfdIsRefused) {
  bb::UniqueFd fd(memfd_create("plain", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_TRUE(fd);
  ASSERT_EQ(ftruncate(fd.get(), 4096), 0);
  auto got = bb::SealedBlob::adopt(std::move(fd), 4096);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("not sealed"), std::string::npos) << got.error().message;
  EXPECT_FALSE(bb::SealedBlob::adopt(bb::UniqueFd(), 1));
}

// A fork() in another thread waits while a window is open (fork_guard.hpp), so no child is made
// with a writable copy of a mapping on its way to MADV_DONTFORK.
TEST(SealedBlob, NoForkHappensWhileAWritableMappingCanBeInherited) {
  std::atomic<bool> forked{false};
  std::thread forker;
  {
    const bb::ForkFreeWindow window;
    forker = std::thread([&] {
      const pid_t pid = fork();
      if (pid == 0) _exit(0);
      forked = true;
      if (pid > 0) waitpid(pid, nullptr, 0);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(forked.load()) << "fork() ran inside the window";
  }
  forker.join();
  EXPECT_TRUE(forked.load());
  // And a window of one thread does not keep another's out: they overlap.
  const bb::ForkFreeWindow one;
  std::thread([] { const bb::ForkFreeWindow two; }).join();
}

// The whole path under fire: blobs made and sealed while another thread starts children that
// live a while without exec (as a sandbox's relay does). Each blob seals; none is busy.
TEST(SealedBlob, BlobsSealWhileOtherThreadsForkLongLivedChildren) {
  std::atomic<bool> stop{false};
  std::thread forker([&] {
    std::vector<pid_t> alive;
    while (!stop) {
      const pid_t pid = fork();
      if (pid == 0) {
        usleep(300000);
        _exit(0);
      }
      if (pid > 0) alive.push_back(pid);
      if (alive.size() >= 32) {
        waitpid(alive.front(), nullptr, 0);
        alive.erase(alive.begin());
      }
    }
    for (pid_t p : alive) waitpid(p, nullptr, 0);
  });
  int failed = 0;
  std::string why;
  for (int i = 0; i < 8000; ++i) {
    auto blob = bb::SealedBlob::create(4096, [](uint8_t* p) { std::memset(p, 1, 4096); });
    if (!blob) ++failed, why = blob.error().message;
  }
  stop = true;
  forker.join();
  EXPECT_EQ(failed, 0) << why;
}

TEST(MessageChannel, ABlobCrossesASocketBesideItsLine) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  auto blob = bb::SealedBlob::create(64, [](uint8_t* p) { std::memset(p, 0x5a, 64); });
  ASSERT_TRUE(blob);
  ASSERT_TRUE(bb::send_line(sv[0], R"({"a":1})", blob->fd()));
  ASSERT_TRUE(bb::send_line(sv[0], R"({"b":2})"));
  bb::LineReader reader(sv[1]);
  std::vector<std::pair<std::string, bb::UniqueFd>> lines;
  while (lines.size() < 2) {
    if (auto l = reader.next_line()) {
      lines.push_back(std::move(*l));
      continue;
    }
    ASSERT_GT(reader.read_some(), 0);
  }
  EXPECT_EQ(lines[0].first, R"({"a":1})");
  ASSERT_TRUE(lines[0].second);
  auto got = bb::SealedBlob::adopt(std::move(lines[0].second), 64);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data()[63], 0x5a);
  EXPECT_EQ(lines[1].first, R"({"b":2})");
  EXPECT_FALSE(lines[1].second);
  close(sv[0]);
  close(sv[1]);
}
