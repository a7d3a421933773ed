// What else the host did: the CPU of processes outside the run, read from a /proc made here.
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "devices/host_load.hpp"

namespace fs = std::filesystem;

namespace {

// A /proc with `procs` (pid, ppid, comm, utime ticks) and the machine's busy/idle/steal ticks.
void write_proc(const fs::path& dir, const std::vector<std::tuple<int, int, std::string, int>>& procs, int busy, int idle, int steal,
                double load) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "stat") << "cpu  " << busy << " 0 0 " << idle << " 0 0 0 " << steal << " 0 0\ncpu0 1 2 3\n";
  std::ofstream(dir / "loadavg") << load << " 0.5 0.4 1/100 999\n";
  for (const auto& [pid, ppid, comm, utime] : procs) {
    fs::create_directories(dir / std::to_string(pid));
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ... starttime(22)
    std::ofstream(dir / std::to_string(pid) / "stat") << pid << " (" << comm << ") S " << ppid
                                                      << " 0 0 0 0 0 0 0 0 0 " << utime << " 0 0 0 20 0 1 0 " << pid * 10 << " 0 0\n";
  }
}

}  // namespace

TEST(HostLoad, OtherProcessesAreCountedByNameAndTheRunsOwnAreNot) {
  const fs::path dir = fs::temp_directory_path() / ("bb_host_load_" + std::to_string(getpid()));
  const long hz = sysconf(_SC_CLK_TCK);
  // The run is pid 100 with a worker 101 and its child 102; cc1plus (200) and a shell (300) are
  // others; 400 starts during the run.
  write_proc(dir, {{100, 1, "backendbench", 10}, {101, 100, "backendbench", 0}, {102, 101, "backendbench", 0},
                   {200, 1, "cc1plus", 50}, {300, 1, "bash (login)", 5}},
             1000, 1000, 0, 0.5);
  std::vector<bb::LoadSample> samples{bb::sample_load(dir.string())};
  samples.back().at = 0;
  write_proc(dir, {{100, 1, "backendbench", 10 + 2 * hz}, {101, 100, "backendbench", 5 * hz}, {102, 101, "backendbench", 3 * hz},
                   {200, 1, "cc1plus", 50 + 8 * hz}, {300, 1, "bash (login)", 5}, {400, 1, "cc1plus", 2 * hz}},
             1000 + 20 * hz, 1000, static_cast<int>(hz), 3.5);
  samples.push_back(bb::sample_load(dir.string()));
  samples.back().at = 10;
  fs::remove_all(dir);

  const auto h = bb::summarize_load(samples, 100, 2);
  EXPECT_DOUBLE_EQ(h["wall_s"].get<double>(), 10);
  EXPECT_NEAR(h["other_cpu_s"].get<double>(), 10.0, 1e-9);  // cc1plus 8 + 2; not the run's 10, not the idle shell
  EXPECT_NEAR(h["other_share"].get<double>(), 0.5, 1e-9);    // of 2 cores for 10 s
  ASSERT_EQ(h["others"].size(), 1u) << h.dump();
  EXPECT_EQ(h["others"][0]["comm"], "cc1plus");
  EXPECT_NEAR(h["others"][0]["cpu_s"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(h["steal_share"].get<double>(), 1.0 / 21.0, 1e-9);
  EXPECT_DOUBLE_EQ(h["loadavg_max"].get<double>(), 3.5);

  const auto d = bb::disturbances(h);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "other processes took 50% of its 2 cores (10.0 CPU-seconds in 10 s: cc1plus 10.0 s)");
  // A quiet host, and a merged run whose second shard was busy.
  EXPECT_TRUE(bb::disturbances({{"other_share", 0.02}, {"steal_share", 0.0}}).empty());
  auto merged = nlohmann::json{{"shards", {{{"shard", 0}, {"other_share", 0.0}}, h}}};
  merged["shards"][1]["shard"] = 1;
  const auto md = bb::disturbances(merged);
  ASSERT_EQ(md.size(), 1u);
  EXPECT_EQ(md[0].rfind("shard 2: other processes took 50%", 0), 0u) << md[0];
}
