// The device kinds as a table (device_runtimes.hpp): "cpu" and one row per runtime, read by the
// manifest, the plugins' info records, new-op, resource-spec and the worker supply.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>

#include "commands/new_op_templates.hpp"
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

// A slot's workers are narrowed to its one GPU where its runtime's row says how (CUDA: its
// UUID in CUDA_VISIBLE_DEVICES); the first such kind of the slot decides.
TEST(DeviceRuntimes, ASlotsDeviceIsNarrowedWhereItsRuntimesRowSaysHow) {
  const auto gpu = bb::slot_device({"cpu", "cuda"}, 2);
  ASSERT_TRUE(gpu);
  EXPECT_STREQ(gpu.runtime->name, "cuda");
  EXPECT_STREQ(gpu.runtime->visible_env, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(gpu.ordinal, 2);
  EXPECT_FALSE(bb::slot_device({"cpu"}, 0));
  EXPECT_FALSE(bb::slot_device({"hip"}, 0)) << "HIP's row names no variable that takes a UUID";
  EXPECT_FALSE(bb::slot_device({"cuda"}, -1));
}

// new-op writes an implementation for every runtime of the table (a runtime added without one
// gets a note, not a file).
TEST(DeviceRuntimes, NewOpHasATemplateForEveryRuntime) {
  for (const auto& rt : bb::runtime_rows()) {
    const bool has = std::any_of(std::begin(bb::templates::kRuntimeTemplates), std::end(bb::templates::kRuntimeTemplates),
                                 [&](const bb::templates::RuntimeTemplate& t) { return std::string(t.runtime) == rt.name; });
    EXPECT_TRUE(has) << rt.name;
  }
}
