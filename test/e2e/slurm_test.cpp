// Sharded sweeps: the partition itself (--shard i/n, run directly), and a real one-node Slurm
// cluster (scripts/slurm_local.sh) running a sweep as a job array with --shard auto, whose
// shards, merged, are the unsharded sweep.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "run_files.hpp"
#include "run_record.hpp"
#include "shell_util.hpp"

namespace fs = std::filesystem;
using Verdicts = std::map<std::string, std::string>;

namespace {

// Keys of `a` that are also in `b`.
std::vector<std::string> common_keys(const Verdicts& a, const Verdicts& b) {
  std::vector<std::string> both;
  for (const auto& [key, verdict] : a)
    if (b.count(key)) both.push_back(key);
  return both;
}

// Checks that `shards` partition `whole`: none empty, pairwise disjoint, their union `whole`
// with the same verdicts.
void expect_partition(const std::vector<Verdicts>& shards, const Verdicts& whole) {
  Verdicts joined;
  for (size_t i = 0; i < shards.size(); ++i) {
    EXPECT_FALSE(shards[i].empty()) << "shard " << i + 1 << " of " << shards.size() << " ran no test";
    for (size_t j = i + 1; j < shards.size(); ++j)
      EXPECT_TRUE(common_keys(shards[i], shards[j]).empty())
          << "shards " << i + 1 << " and " << j + 1 << " both ran " << fmt::format("{}", fmt::join(common_keys(shards[i], shards[j]), ", "));
    joined.insert(shards[i].begin(), shards[i].end());
  }
  EXPECT_EQ(joined, whole);
}

// The hostile fixtures' quick implementations (no hang: it would cost a timeout per case).
const std::vector<std::string> kHostileArgs = {
    "--custom-ops-root", e2e::fixture_root("hostile"), "--correctness-only", "--test-timeout", "20", "-q",
    "--impls", "scale_good,scale_wrong,scale_segfault,scale_abort,scale_exit,scale_error,scale_unwritten,scale_mutate,scale_overflow,scale_nondet"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

// --shard i/n run directly: the three shards are disjoint, none is empty, together they are
// the unsharded sweep with the same verdicts, and a shard run twice is the same shard.
TEST(Shard, PartitionIsDisjointCompleteAndDeterministic) {
  const fs::path dir = e2e::temp_dir("shards");
  const auto whole_run = e2e::backendbench(with(kHostileArgs, {"--log-dir", (dir / "whole").string()}));
  ASSERT_TRUE(fs::exists(dir / "whole" / "results.json")) << whole_run.err;
  const Verdicts whole = e2e::verdicts_of(dir / "whole");
  ASSERT_GE(whole.size(), 6u) << "too few tests to split three ways";

  std::vector<Verdicts> shards;
  for (int i = 1; i <= 3; ++i) {
    const fs::path log = dir / fmt::format("shard-{}", i);
    const auto r = e2e::backendbench(with(kHostileArgs, {"--shard", fmt::format("{}/3", i), "--log-dir", log.string()}));
    ASSERT_TRUE(fs::exists(log / "results.json")) << "--shard " << i << "/3: exit " << r.exit_code << "\n" << r.err;
    shards.push_back(e2e::verdicts_of(log));
    auto record = bb::load_run(log);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record->shard.index, i - 1);
    EXPECT_EQ(record->shard.count, 3);
  }
  expect_partition(shards, whole);

  // The same shard again: the same tests (verdicts too: these fixtures are deterministic).
  const auto again = e2e::backendbench(with(kHostileArgs, {"--shard", "2/3", "--log-dir", (dir / "again").string()}));
  ASSERT_TRUE(fs::exists(dir / "again" / "results.json")) << again.err;
  EXPECT_EQ(e2e::verdicts_of(dir / "again"), shards[1]);
}

// A shard that is not i/n with 1 <= i <= n is refused with exit 2 and says what was expected.
TEST(Shard, BadShardIsRefused) {
  for (const std::string bad : {"0/3", "4/3", "1/0", "x", "1/"}) {
    const auto r = e2e::backendbench(with(kHostileArgs, {"--shard", bad, "--no-log"}));
    EXPECT_EQ(r.exit_code, 2) << "--shard " << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
  }
}

// A real one-node Slurm cluster, started for each test and stopped whatever happens.
class SlurmArray : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "Slurm tests need root (slurmd runs jobs as their user)";
    for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "sinfo"})
      if (e2e::shell(fmt::format("PATH=$PATH:/usr/sbin command -v {}", program), 10).exit_code != 0)
        GTEST_SKIP() << program << " is not installed (apt-get install munge slurmctld slurmd slurm-client)";
    dir_ = e2e::temp_dir("slurm");
    script_ = fs::path(BB_SOURCE_DIR) / "scripts" / "slurm_local.sh";
    const auto start = e2e::shell(fmt::format("{} start {}", script_.string(), e2e::sh_quote(dir_.string())), 120);
    started_ = true;  // stop in TearDown even after a failed start: it may have left a daemon
    if (start.exit_code != 0) GTEST_SKIP() << "Slurm did not start (exit " << start.exit_code << "):\n" << start.output;
    conf_ = dir_ / "slurm.conf";
  }

  void TearDown() override {
    if (!started_) return;
    const auto stop = e2e::shell(fmt::format("{} stop {}", script_.string(), e2e::sh_quote(dir_.string())), 60);
    EXPECT_EQ(stop.exit_code, 0) << stop.output;
  }

  // `command` with this cluster's SLURM_CONF.
  e2e::ShellRun slurm(const std::string& command, int timeout_s) {
    return e2e::shell(fmt::format("SLURM_CONF={} {}", e2e::sh_quote(conf_.string()), command), timeout_s);
  }

  fs::path dir_, script_, conf_;
  bool started_ = false;
};

// The shipped ops, correctness only, as a 3-task job array with --shard auto: each task ran a
// non-empty part, the parts are disjoint, and `backendbench merge` of them is the unsharded run.
TEST_F(SlurmArray, ShardsOfAnArrayMergeToTheUnshardedRun) {
  const fs::path work = e2e::temp_dir("work");
  const fs::path job = work / "sweep.sbatch";
  {
    std::ofstream out(job);
    out << "#!/bin/sh\n"
        << "# One shard of the sweep: which one, Slurm says (SLURM_ARRAY_TASK_ID, _MIN, _COUNT).\n"
        << fmt::format("exec {} --custom-ops-root {} --correctness-only --shard auto --log-dir {}/shard-$SLURM_ARRAY_TASK_ID -q\n",
                       e2e::sh_quote(BB_BINARY), e2e::sh_quote(BB_SHIPPED_ROOT), e2e::sh_quote(work.string()));
  }
  fs::permissions(job, fs::perms::owner_all, fs::perm_options::add);

  const auto array = slurm(fmt::format("sbatch --wait --array=0-2 --ntasks=1 --cpus-per-task=1 --output={}/slurm-%A_%a.out --chdir={} {}",
                                       e2e::sh_quote(work.string()), e2e::sh_quote(work.string()), e2e::sh_quote(job.string())),
                           200);
  std::string job_logs;
  for (const auto& entry : fs::directory_iterator(work))
    if (entry.path().extension() == ".out") job_logs += "---- " + entry.path().filename().string() + "\n" + e2e::read_text(entry.path());

  // The unsharded sweep, run directly.
  const auto whole_run = e2e::backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--correctness-only", "-q", "--log-dir", (work / "whole").string()});
  ASSERT_TRUE(fs::exists(work / "whole" / "results.json")) << whole_run.err;
  // sbatch --wait exits with the highest exit status of the array's tasks: the sweep's status.
  EXPECT_EQ(array.exit_code, whole_run.exit_code) << array.output << job_logs;

  std::vector<Verdicts> shards;
  std::vector<std::string> shard_dirs;
  for (int task = 0; task < 3; ++task) {
    const fs::path log = work / fmt::format("shard-{}", task);
    ASSERT_TRUE(fs::exists(log / "results.json")) << "array task " << task << " wrote no results\n" << array.output << job_logs;
    shards.push_back(e2e::verdicts_of(log));
    shard_dirs.push_back(e2e::sh_quote(log.string()));
    auto record = bb::load_run(log);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record->shard.index, task) << "task " << task << " is not shard " << task + 1 << "/3";
    EXPECT_EQ(record->shard.count, 3);
  }
  const Verdicts whole = e2e::verdicts_of(work / "whole");
  expect_partition(shards, whole);

  // backendbench merge joins the shards into the unsharded run.
  const auto merge = e2e::backendbench({"merge", "--log-dir", (work / "merged").string(), (work / "shard-0").string(),
                                        (work / "shard-1").string(), (work / "shard-2").string()});
  ASSERT_TRUE(fs::exists(work / "merged" / "results.json")) << "merge exit " << merge.exit_code << "\n" << merge.err;
  EXPECT_EQ(merge.exit_code, whole_run.exit_code) << merge.err;
  EXPECT_EQ(e2e::verdicts_of(work / "merged"), whole);
}

// The script's own contract: starting twice is fine (the second replaces the first), and after
// stop no daemon of the cluster is left.
TEST_F(SlurmArray, StartTwiceThenStopLeavesNothingRunning) {
  const auto again = e2e::shell(fmt::format("{} start {}", script_.string(), e2e::sh_quote(dir_.string())), 120);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("export SLURM_CONF="), std::string::npos) << again.output;
  const auto info = slurm("sinfo -h -N -o %t", 30);
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("idle"), std::string::npos) << info.output;

  // Remember the daemons' pids, stop, and check that none of them lives on.
  std::vector<std::string> pids;
  for (const char* name : {"munged", "slurmctld", "slurmd"}) {
    std::ifstream in(dir_ / "run" / (std::string(name) + ".pid"));
    std::string pid;
    ASSERT_TRUE(in >> pid) << "no pid file for " << name;
    pids.push_back(pid);
  }
  const auto stop = e2e::shell(fmt::format("{} stop {}", script_.string(), e2e::sh_quote(dir_.string())), 60);
  ASSERT_EQ(stop.exit_code, 0) << stop.output;
  for (const auto& pid : pids) {
    // Gone, or a zombie that only waits for its parent to reap it.
    const std::string stat = e2e::read_text("/proc/" + pid + "/stat");
    const auto paren = stat.rfind(')');
    EXPECT_TRUE(stat.empty() || (paren != std::string::npos && stat.compare(paren + 2, 1, "Z") == 0))
        << "process " << pid << " outlived stop: " << stat;
  }
  const auto stop_again = e2e::shell(fmt::format("{} stop {}", script_.string(), e2e::sh_quote(dir_.string())), 60);
  EXPECT_EQ(stop_again.exit_code, 0) << stop_again.output;
}
