// The device kinds as a table (device_runtimes.hpp): "cpu" and one row per runtime, read by the
// manifest, the plugins' info records, new-op, resource-spec and the worker supply.
#include <gtest/gtest.h>

#include "devices/device_runtimes.hpp"

TEST(DeviceRuntimes, TheTableNamesCpuAndEachRuntimeOnce) {
  EXPECT_EQ(bb::device_kind_names(), (std::vector<std::string>{"cpu", "cuda", "hip"}));
  EXPECT_EQ(bb::device_kind_choices(), "cpu, cuda or hip");  // as the error messages say it
  for (const char* k : {"cpu", "cuda", "hip"}) EXPECT_TRUE(bb::is_device_kind(k)) << k;
  for (const char* k : {"CPU", "gpu", "", "cuda "}) EXPECT_FALSE(bb::is_device_kind(k)) << k;
  EXPECT_TRUE(bb::is_cpu("cpu"));
  EXPECT_FALSE(bb::is_cpu("cuda"));
  EXPECT_FALSE(bb::find_runtime_row("cpu"));  // the host's own, no runtime
  ASSERT_TRUE(bb::find_runtime_row("cuda"));
  EXPECT_STREQ(bb::find_runtime_row("cuda")->driver_node, "/dev/nvidiactl");
  EXPECT_EQ(bb::runtime_plugin_file("hip"), "backendbench_hip.so");
}
