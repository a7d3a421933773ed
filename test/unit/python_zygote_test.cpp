// python_zygote.hpp: what a worker forked from the warm interpreter is started with, as the
// host sends it and the interpreter reads it back, and the packets that carry it (message_channel.hpp).
#include "run/workers/python_zygote.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/message_channel.hpp"

namespace {

std::vector<std::string> texts(const std::vector<const char*>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST(PythonZygote, ASpawnRequestIsReadBackWithEveryWall) {
  std::string procs = "/sys/fs/cgroup/backendbench/7-1/cgroup.procs", logs = "/tmp/logs", other = "/root/ops/x/x_other.so",
              root = "/root/ops", passwd = "/tmp/h/passwd", group = "/tmp/h/group", home = "/tmp/h/home", options = "size=1g,mode=0700";
  bb::PreparedSandbox w;
  w.namespaces = true;
  w.cgroup_procs = procs.c_str();
  w.hidden_dirs = {logs.c_str()};
  w.hidden_files = {other.c_str()};
  w.readonly_dirs = {root.c_str()};
  w.passwd_file = passwd.c_str();
  w.group_file = group.c_str();
  w.home_dir = home.c_str();
  w.home_options = options.c_str();
  w.uid = 0x60001234;
  w.groups = {44, 109};
  w.host_pid = 4242;
  std::string a = "HOME=/tmp/h/home", b = "LD_BIND_NOW=1";
  const std::vector<char*> env{a.data(), b.data(), nullptr};
  // Through text, as it travels.
  const auto request = nlohmann::json::parse(bb::spawn_request(w, env, 1ull << 30).dump());
  auto spec = bb::spawn_spec_from_json(request);
  ASSERT_TRUE(spec) << spec.error().message;
  const bb::PreparedSandbox& r = (*spec)->walls;
  EXPECT_TRUE(r.namespaces);
  EXPECT_STREQ(r.cgroup_procs, procs.c_str());
  EXPECT_EQ(texts(r.hidden_dirs), std::vector<std::string>{logs});
  EXPECT_EQ(texts(r.hidden_files), std::vector<std::string>{other});
  EXPECT_EQ(texts(r.readonly_dirs), std::vector<std::string>{root});
  EXPECT_STREQ(r.passwd_file, passwd.c_str());
  EXPECT_STREQ(r.group_file, group.c_str());
  EXPECT_STREQ(r.home_dir, home.c_str());
  EXPECT_STREQ(r.home_options, options.c_str());
  EXPECT_EQ(r.uid, 0x60001234);
  EXPECT_FALSE(r.drop_capabilities);
  EXPECT_EQ(r.groups, (std::vector<unsigned>{44, 109}));
  EXPECT_EQ(r.host_pid, 4242);
  EXPECT_EQ((*spec)->memory_bytes, 1ull << 30);
  EXPECT_EQ((*spec)->environment, (std::vector<std::string>{a, b}));
}

TEST(PythonZygote, AbsentWallsStayAbsent) {
  bb::PreparedSandbox w;  // no cgroup, no namespaces, no user: what a host that is not root gets
  w.host_pid = 1;
  auto spec = bb::spawn_spec_from_json(bb::spawn_request(w, {nullptr}, 0));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ((*spec)->walls.cgroup_procs, nullptr);
  EXPECT_EQ((*spec)->walls.passwd_file, nullptr);
  EXPECT_EQ((*spec)->walls.home_dir, nullptr);
  EXPECT_EQ((*spec)->walls.uid, -1);
  EXPECT_TRUE((*spec)->environment.empty());
}

TEST(PythonZygote, AnUnreadableRequestIsAnErrorNotACrash) {
  for (const char* text : {R"({"cmd": "spawn"})", R"({"cmd": "spawn", "namespaces": "yes"})", "[]", "null"}) {
    auto spec = bb::spawn_spec_from_json(nlohmann::json::parse(text));
    ASSERT_FALSE(spec) << text;
    EXPECT_NE(spec.error().message.find("a spawn request the warm interpreter cannot read"), std::string::npos) << spec.error().message;
  }
}

TEST(PythonZygote, APacketCarriesItsTextAndTwoDescriptors) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const std::string big(200000, 'x');  // an environment of a few hundred kilobytes still fits
  ASSERT_TRUE(bb::send_packet(sv[0], "first", {pipe_fds[0], pipe_fds[1]}));
  ASSERT_TRUE(bb::send_packet(sv[0], big));
  auto first = bb::receive_packet(sv[1]);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->first, "first");
  ASSERT_EQ(first->second.size(), 2u);
  // The copies are the pipe's ends: written through one, read through the other.
  ASSERT_EQ(write(first->second[1].get(), "ok", 2), 2);
  char got[2];
  ASSERT_EQ(read(pipe_fds[0], got, 2), 2);
  EXPECT_EQ(std::string(got, 2), "ok");
  auto second = bb::receive_packet(sv[1]);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->first.size(), big.size());
  EXPECT_TRUE(second->second.empty());
  close(sv[0]);
  EXPECT_FALSE(bb::receive_packet(sv[1])) << "the end of the stream";
  close(sv[1]);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(PythonZygote, ATooLargePacketIsRefused) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_FALSE(bb::send_packet(sv[0], std::string(bb::kMaxPacket + 1, 'x')));
  EXPECT_FALSE(bb::send_packet(sv[0], "five descriptors", {0, 0, 0, 0, 0}));
  close(sv[0]);
  close(sv[1]);
}

TEST(PythonZygote, ItsSummaryIsNullUntilStarted) { EXPECT_TRUE(bb::PythonZygote::get().summary().is_null()); }
