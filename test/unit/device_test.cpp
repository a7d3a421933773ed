// The device runtime plugins as the worker loads them. On a machine without the device these
// tests are skipped with the reason the runtime gave.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "device.hpp"

namespace {

bb::DeviceRuntime* runtime_or_skip(const char* name, std::string& why) {
  auto rt = bb::DeviceRuntime::get(name);
  if (!rt) {
    why = rt.error().message;
    return nullptr;
  }
  return *rt;
}

}  // namespace

TEST(Device, AMissingRuntimeSaysWhy) {
  auto rt = bb::DeviceRuntime::get("no_such_runtime");
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.error().message.find("no no_such_runtime runtime plugin (backendbench_no_such_runtime.so not found"), std::string::npos)
      << rt.error().message;
  auto j = bb::describe_device_kind("no_such_runtime");
  EXPECT_FALSE(j["available"].get<bool>());
}

TEST(Device, CudaPropertiesAreRead) {
  std::string why;
  bb::DeviceRuntime* rt = runtime_or_skip("cuda", why);
  if (!rt) GTEST_SKIP() << "no CUDA device: " << why;
  ASSERT_FALSE(rt->devices().empty());
  const auto& p = rt->devices()[0];
  EXPECT_GT(p.multiprocessors, 0);
  EXPECT_GT(p.l2_bytes, 1 << 20);
  EXPECT_GT(p.memory_bytes, int64_t{1} << 30);
  EXPECT_GT(p.memory_clock_khz, 0);
  EXPECT_GT(p.peak_bandwidth_gbps, 100.0);
  EXPECT_EQ(std::string(p.arch).rfind("sm_", 0), 0u) << p.arch;
}

TEST(Device, CudaMemoryStreamsAndEvents) {
  std::string why;
  bb::DeviceRuntime* rt = runtime_or_skip("cuda", why);
  if (!rt) GTEST_SKIP() << "no CUDA device: " << why;
  const auto& api = rt->api();
  ASSERT_EQ(api.set_device(0), 0);
  void* stream = nullptr;
  ASSERT_EQ(api.stream_create(&stream), 0);
  const size_t n = 1 << 20;
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(api.malloc(&a, n), 0);
  ASSERT_EQ(api.malloc(&b, n), 0);
  std::vector<unsigned char> host(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7);
  ASSERT_EQ(api.memcpy_h2d(a, host.data(), n), 0);
  void *e0 = nullptr, *e1 = nullptr;
  ASSERT_EQ(api.event_create(&e0), 0);
  ASSERT_EQ(api.event_create(&e1), 0);
  ASSERT_EQ(api.event_record(e0, stream), 0);
  ASSERT_EQ(api.memcpy_d2d(b, a, n, stream), 0);
  ASSERT_EQ(api.event_record(e1, stream), 0);
  ASSERT_EQ(api.stream_synchronize(stream), 0);
  float ms = -1;
  ASSERT_EQ(api.event_elapsed_ms(&ms, e0, e1), 0);
  EXPECT_GE(ms, 0.0f);
  ASSERT_EQ(api.memcpy_d2h(back.data(), b, n), 0);
  EXPECT_EQ(host, back);
  ASSERT_EQ(api.memset(b, 0x5a, n, stream), 0);
  ASSERT_EQ(api.stream_synchronize(stream), 0);
  ASSERT_EQ(api.memcpy_d2h(back.data(), b, n), 0);
  EXPECT_EQ(back[n - 1], 0x5a);
  EXPECT_EQ(api.get_last_error(), 0);
  EXPECT_FALSE(rt->sticky(0));
  api.event_destroy(e0);
  api.event_destroy(e1);
  api.free(a);
  api.free(b);
  api.stream_destroy(stream);
}

TEST(Device, HipLoadsAndReportsItsDevices) {
  bool built = false;
  for (const auto& d : bb::runtime_plugin_dirs()) built = built || std::filesystem::exists(std::filesystem::path(d) / "backendbench_hip.so");
  if (!built) GTEST_SKIP() << "built without hipcc: no HIP runtime plugin";
  auto j = bb::describe_device_kind("hip");
  if (!j["available"].get<bool>()) {
    // Loaded, asked the runtime, and it found no device: the reason says so (not "not found",
    // not "cannot be loaded").
    EXPECT_EQ(j["reason"].get<std::string>().rfind("no hip device", 0), 0u) << j.dump();
    return;
  }
  ASSERT_FALSE(j["devices"].empty());
  EXPECT_GT(j["devices"][0]["multiprocessors"].get<int>(), 0);
  EXPECT_EQ(j["devices"][0]["arch"].get<std::string>().rfind("gfx", 0), 0u);
}
