#include <gtest/gtest.h>

#include <map>
#include <string>

#include "commands/cli.hpp"

namespace {
// An environment of our own, so the test does not depend on (or change) the process's.
std::function<const char*(const char*)> env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();  // lives as long as the function
  };
}
}  // namespace

TEST(Cli, ShardIsOneBasedOnTheCommandLine) {
  auto s = bb::parse_shard("2/3", env({}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->first, 1);
  EXPECT_EQ(s->second, 3);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "/3", "1/", "-1/3", "99999999999/3"}) {
    auto b = bb::parse_shard(bad, env({}));
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().message.find("expected i/n"), std::string::npos) << b.error().message;
  }
}

TEST(Cli, ShardAutoReadsASlurmArray) {
  // --array=1-3: ids 1..3, MIN 1.
  auto s = bb::parse_shard("auto", env({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s, (std::pair<int, int>{2, 3}));
  // --array=0-2, MIN unset: counted from 0.
  s = bb::parse_shard("auto", env({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s, (std::pair<int, int>{0, 3}));
  // An id past the count (a stepped array, --array=0-10:5) is refused with the variables named.
  auto bad = bb::parse_shard("auto", env({{"SLURM_ARRAY_TASK_ID", "10"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("SLURM_ARRAY_TASK_ID=10"), std::string::npos) << bad.error().message;
}

TEST(Cli, ShardAutoReadsAKubernetesIndexedJob) {
  auto s = bb::parse_shard("auto", env({{"JOB_COMPLETION_INDEX", "4"}, {"JOB_COMPLETIONS", "5"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s, (std::pair<int, int>{4, 5}));
  s = bb::parse_shard("auto", env({{"JOB_COMPLETION_INDEX", "0"}, {"BACKENDBENCH_SHARD_COUNT", "2"}}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(*s, (std::pair<int, int>{0, 2}));
  auto no_count = bb::parse_shard("auto", env({{"JOB_COMPLETION_INDEX", "0"}}));
  ASSERT_FALSE(no_count);
  EXPECT_NE(no_count.error().message.find("JOB_COMPLETIONS"), std::string::npos);
  auto none = bb::parse_shard("auto", env({}));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("SLURM_ARRAY_TASK_ID"), std::string::npos);
}

TEST(Cli, Devices) {
  auto all = bb::parse_devices("all");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->first);
  auto some = bb::parse_devices("1,0,1");
  ASSERT_TRUE(some);
  EXPECT_FALSE(some->first);
  EXPECT_EQ(some->second, (std::vector<int>{1, 0}));
  for (const char* bad : {"x", "0,,1", "-1", "0,", "gpu0"}) {
    auto b = bb::parse_devices(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().message.find("--devices"), std::string::npos);
  }
}

TEST(Cli, DevicesFromACTestResourceGroup) {
  ::setenv("CTEST_RESOURCE_GROUP_COUNT", "1", 1);
  ::setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1", 1);
  EXPECT_EQ(bb::ctest_devices(), "1");
  ::setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:0,slots:1;id:3,slots:1", 1);
  EXPECT_EQ(bb::ctest_devices(), "0,3");
  ::unsetenv("CTEST_RESOURCE_GROUP_COUNT");
  ::unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");
  EXPECT_EQ(bb::ctest_devices(), "");
}
