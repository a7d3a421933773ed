// A device kind's description, read once from a worker's reply: the peaks each result is held
// to, the devices a run's worker slots are made for, and a damaged reply read without throwing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "devices/device_kind.hpp"

TEST(DeviceKind, PeaksAreReadFromTheDeviceDescription) {
  const auto kind = bb::device_kind_from_json(nlohmann::json::parse(R"({"name": "cuda", "available": true, "devices": [
      {"ordinal": 0, "measured_compute": [{"kind": "fp32", "tflops": 50.5}, {"kind": "fp16 tensor", "tflops": 600},
                                          {"kind": "fp16 tensor", "tflops": 450}]},
      {"ordinal": 1, "measured_compute": "damaged"}]})"));
  ASSERT_NE(kind.device(0), nullptr);
  ASSERT_NE(kind.device(1), nullptr);
  EXPECT_DOUBLE_EQ(kind.device(0)->peak_tflops("fp32"), 50.5);
  EXPECT_DOUBLE_EQ(kind.device(0)->peak_tflops("fp16 tensor"), 600);  // the best of its strategies
  EXPECT_DOUBLE_EQ(kind.device(0)->peak_tflops("bf16 tensor"), 0);    // not measured there
  EXPECT_DOUBLE_EQ(kind.device(1)->peak_tflops("fp32"), 0);           // a damaged entry is no peak
  EXPECT_EQ(kind.device(2), nullptr);                                 // no such device
  EXPECT_EQ(kind.ordinals(), (std::vector<int>{0, 1}));
}

TEST(DeviceKind, BandwidthMeasuredCachedOrNot) {
  const auto reply = nlohmann::json::parse(R"({"name": "cuda", "available": true, "runtime": "CUDA 13.0", "devices": [
      {"ordinal": 0, "name": "H100", "arch": "sm_90", "multiprocessors": 132, "l2_bytes": 52428800, "memory_bytes": 85029158912,
       "peak_bandwidth_gbps": 3352.3, "measured_bandwidth": {"copy_gbps": 2965.4, "strategy": "copy kernel, 16-byte vectors", "cached": true}},
      {"ordinal": 1, "peak_bandwidth_gbps": 3352.3, "measured_bandwidth": {"copy_gbps": 2900, "cached": false}},
      {"ordinal": 2, "measured_bandwidth": {"error": "cudaMalloc: out of memory"}},
      {"ordinal": 3, "measured_bandwidth": null}]})");
  const auto kind = bb::device_kind_from_json(reply);
  EXPECT_TRUE(kind.available);
  EXPECT_EQ(kind.runtime, "CUDA 13.0");
  EXPECT_EQ(kind.reply, reply);  // kept as it came, for results.json and the results stream
  ASSERT_EQ(kind.devices.size(), 4u);
  const auto& d0 = kind.devices[0];
  EXPECT_EQ(d0.name, "H100");
  EXPECT_EQ(d0.arch, "sm_90");
  EXPECT_EQ(d0.multiprocessors, 132);
  EXPECT_DOUBLE_EQ(d0.memory_bytes, 85029158912.0);
  EXPECT_DOUBLE_EQ(d0.measured_gbps, 2965.4);
  EXPECT_DOUBLE_EQ(d0.peak_bandwidth_gbps, 3352.3);
  EXPECT_EQ(d0.measured_strategy, "copy kernel, 16-byte vectors");
  EXPECT_TRUE(d0.measured_cached);
  EXPECT_FALSE(d0.measured_now);
  EXPECT_TRUE(kind.devices[1].measured_now);  // measured by this probe: the cache learns it
  EXPECT_EQ(kind.devices[1].measured_strategy, "copy kernel");
  EXPECT_TRUE(kind.measured_now());
  EXPECT_EQ(kind.devices[2].measure_error, std::optional<std::string>("cudaMalloc: out of memory"));
  EXPECT_DOUBLE_EQ(kind.devices[2].measured_gbps, 0);
  EXPECT_FALSE(kind.devices[3].measure_error);  // not measured (a run that times nothing)
}

TEST(DeviceKind, AnUnavailableKindSaysWhy) {
  auto kind = bb::device_kind_from_json({{"name", "hip"}, {"available", false}, {"reason", "no hip device"}});
  EXPECT_FALSE(kind.available);
  EXPECT_EQ(kind.reason, "no hip device");
  EXPECT_TRUE(kind.devices.empty());
  kind = bb::device_kind_from_json({{"name", "hip"}});
  EXPECT_FALSE(kind.available);  // nothing said: not available
  EXPECT_EQ(kind.reason, "device unavailable");
  EXPECT_TRUE(bb::cpu_device_kind().available);
  EXPECT_EQ(bb::cpu_device_kind().name, "cpu");
}

// Every field of another type than expected reads as its default: the reply is a process's, and
// the host reads it without an exception.
TEST(DeviceKind, ADamagedReplyIsReadWithoutThrowing) {
  for (const char* text : {R"(null)", R"([1, 2])", R"("cuda")", R"({"name": 7, "available": "yes", "devices": {"0": 1}})",
                           R"({"available": true, "devices": [1, "x", null, {"ordinal": "0", "name": [], "l2_bytes": "big",
                               "measured_bandwidth": {"copy_gbps": "fast", "cached": 1, "error": 5},
                               "measured_compute": [7, {"kind": 1, "tflops": "many"}]}]})"}) {
    bb::DeviceKind kind;
    ASSERT_NO_THROW(kind = bb::device_kind_from_json(nlohmann::json::parse(text))) << text;
    for (const auto& d : kind.devices) {
      EXPECT_EQ(d.ordinal, 0) << text;
      EXPECT_EQ(d.name, "?") << text;
      EXPECT_DOUBLE_EQ(d.measured_gbps, 0) << text;
      EXPECT_DOUBLE_EQ(d.peak_tflops(""), 0) << text;
    }
  }
  const auto kind = bb::device_kind_from_json(nlohmann::json::parse(R"({"name": 7, "available": "yes"})"));
  EXPECT_FALSE(kind.available);  // "yes" is no boolean
  EXPECT_EQ(kind.name, "?");
}
