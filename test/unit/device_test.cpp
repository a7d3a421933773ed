// The device runtime plugins as the worker loads them. On a machine without the device these
// tests are skipped with the reason the runtime gave.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "devices/device.hpp"
#include "host_buffer.hpp"
#include "init.hpp"
#include "measure/device_peak.hpp"
#include "run/allclose.hpp"
#include "run/tolerance.hpp"
#include "worker/device_probe.hpp"

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

// A GPU case's inputs made on its device are the host's bytes: every initialiser a device can
// make, on every dtype, with values that round to half subnormals, overflow 16-bit floats and
// saturate integers; and a checked call's sparse change (fill_scattered) over them.
TEST(Device, InputsMadeOnTheCudaDeviceAreTheHostsBytes) {
  std::string why;
  bb::DeviceRuntime* rt = runtime_or_skip("cuda", why);
  if (!rt) GTEST_SKIP() << "no CUDA device: " << why;
  const auto& api = rt->api();
  ASSERT_EQ(api.set_device(0), 0);
  const int64_t n = (int64_t{1} << 20) + 3;
  void* dev = nullptr;
  ASSERT_EQ(api.malloc(&dev, static_cast<std::size_t>(n) * 8), 0);
  struct Init {
    bb::InitKind kind;
    double a, b;
  };
  const Init inits[] = {{bb::InitKind::randn, 0.0, 1.0},         {bb::InitKind::randn, 3.0, 30000.0},  // beyond half's range
                        {bb::InitKind::uniform, -1e-6, 1e-6},     // half subnormals
                        {bb::InitKind::uniform, -300.0, 300.0},   // saturates int8 and uint8
                        {bb::InitKind::uniform, -3e38, 3e38},     // bfloat16 rounds to infinity
                        {bb::InitKind::randint, -5.0, 5.0},       {bb::InitKind::randint, 0.0, 2.0},
                        {bb::InitKind::ones, 0, 0},               {bb::InitKind::zeros, 0, 0},
                        {bb::InitKind::arange, -7.5, 0.25},       {bb::InitKind::full, 65519.0, 0}};
  int compared = 0;
  for (bb::DType d : bb::all_dtypes())
    for (const Init& init : inits) {
      bb::ConcreteTensor t{"x", {n}, d, bb::InitSpec{init.kind, init.a, init.b, {}, 0}};
      const uint64_t seed = 0x5eed + static_cast<uint64_t>(compared);
      std::vector<uint8_t> host(t.nbytes()), back(t.nbytes());
      ASSERT_TRUE(bb::fill_tensor(t, host.data(), seed, std::filesystem::temp_directory_path()).ok());
      const DLDataType dl = bb::to_dlpack(d);
      bb_fill_spec spec{sizeof(bb_fill_spec), *bb::device_init_kind(init.kind), init.a, init.b, seed, dl.code, dl.bits};
      ASSERT_EQ(api.fill(&spec, dev, static_cast<std::size_t>(n)), 0) << bb::dtype_name(d);
      ASSERT_EQ(api.memcpy_d2h(back.data(), dev, back.size()), 0);
      const auto first = std::mismatch(host.begin(), host.end(), back.begin());
      EXPECT_TRUE(first.first == host.end()) << bb::dtype_name(d) << " " << bb::init_kind_name(init.kind) << "(" << init.a << ", " << init.b
                                             << "): first differing byte " << (first.first - host.begin());
      // The sparse change: about one element in 4096 drawn from another seed, at least one.
      const uint64_t other = seed ^ 0xc0ffee, count = std::max<uint64_t>(1, static_cast<uint64_t>(n) / 4096);
      for (uint64_t j = 0; j < count; ++j) {
        const uint64_t k = bb::random_bits(other, j) % static_cast<uint64_t>(n);
        bb::store_element(d, host.data(), k, *bb::init_value(t.init, other, k));
      }
      spec.seed = other;
      ASSERT_EQ(api.fill_scattered(&spec, dev, static_cast<std::size_t>(n), count), 0);
      ASSERT_EQ(api.memcpy_d2h(back.data(), dev, back.size()), 0);
      EXPECT_TRUE(host == back) << bb::dtype_name(d) << " " << bb::init_kind_name(init.kind) << ": the scattered change differs";
      ++compared;
    }
  EXPECT_EQ(compared, static_cast<int>(bb::all_dtypes().size() * std::size(inits)));
  bb_fill_spec unknown{sizeof(bb_fill_spec), 99, 0, 0, 0, kDLFloat, 32};
  EXPECT_NE(api.fill(&unknown, dev, 16), 0);  // a kind it does not know: an error, nothing written
  api.free(dev);
}

// A timed sample's fresh inputs made on the device (fill_fresh): the initialiser's distribution
// in every float dtype the fast path makes and the one it leaves to the exact path's code (float64),
// odd sizes, the same bits for the same seed, every element new for another seed, half and
// bfloat16 the float values rounded to nearest even (half subnormals too), and an unaligned
// destination made as an aligned one.
TEST(Device, FreshInputsMadeOnTheCudaDeviceHaveTheInitialisersDistribution) {
  std::string why;
  bb::DeviceRuntime* rt = runtime_or_skip("cuda", why);
  if (!rt) GTEST_SKIP() << "no CUDA device: " << why;
  const auto& api = rt->api();
  ASSERT_EQ(api.set_device(0), 0);
  ASSERT_TRUE(api.fill_fresh) << "a runtime before version 9";
  void* stream = nullptr;
  ASSERT_EQ(api.stream_create(&stream), 0);
  const std::size_t n = (std::size_t{1} << 20) + 3;
  void* dev = nullptr;
  ASSERT_EQ(api.malloc(&dev, n * 8 + 64), 0);
  auto made = [&](bb::InitKind kind, double a, double b, uint64_t seed, bb::DType d, std::size_t count, std::size_t offset = 0) {
    const DLDataType dl = bb::to_dlpack(d);
    bb_fill_spec spec{sizeof(bb_fill_spec), *bb::device_init_kind(kind), a, b, seed, dl.code, dl.bits, 0, 0};
    void* at = static_cast<uint8_t*>(dev) + offset;
    EXPECT_EQ(api.fill_fresh(&spec, at, count, stream), 0);
    EXPECT_EQ(api.stream_synchronize(stream), 0);
    const std::size_t size = bb::dtype_size(d);
    std::vector<uint8_t> bytes(count * size);
    EXPECT_EQ(api.memcpy_d2h(bytes.data(), at, bytes.size()), 0);
    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = bb::load_element(d, bytes.data(), i);
    return v;
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  auto stddev = [&](const std::vector<double>& v) {
    const double m = mean(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  for (bb::DType d : {bb::DType::float32, bb::DType::float16, bb::DType::bfloat16, bb::DType::float64}) {
    const std::string name = bb::dtype_name(d);
    const auto z = made(bb::InitKind::randn, 0.5, 2.0, 7, d, n);
    EXPECT_NEAR(mean(z), 0.5, 0.02) << name;
    EXPECT_NEAR(stddev(z), 2.0, 0.02) << name;
    std::size_t beyond3 = 0;  // 0.27% of a normal lies beyond 3 sigma
    for (double x : z) beyond3 += std::abs(x - 0.5) > 6.0;
    EXPECT_NEAR(static_cast<double>(beyond3) / static_cast<double>(n), 0.0027, 0.0005) << name;
    EXPECT_EQ(made(bb::InitKind::randn, 0.5, 2.0, 7, d, n), z) << name << ": the same seed, the same values";
    const auto u = made(bb::InitKind::uniform, -1.0, 3.0, 7, d, n);
    EXPECT_NEAR(mean(u), 1.0, 0.02) << name;
    EXPECT_NEAR(stddev(u), 4.0 / std::sqrt(12.0), 0.02) << name;
    for (double x : u) ASSERT_TRUE(x >= -1.0 && x <= 3.0) << name << " " << x;  // 16-bit dtypes may round up to 3
    for (auto kind : {bb::InitKind::randn, bb::InitKind::uniform}) {
      const auto a = made(kind, 0, 1, 11, d, n), b = made(kind, 0, 1, 12, d, n);
      std::size_t same = 0;
      for (std::size_t i = 0; i < n; ++i) same += a[i] == b[i];
      // 16-bit dtypes hold few values near 0 and 1: equal by chance far more often than float32.
      EXPECT_LT(same, bb::dtype_size(d) == 2 ? n / 50 : n / 100000) << name << " " << bb::init_kind_name(kind)
                                                                     << ": a cache of the elements that did not change would gain";
    }
  }
  // Half precision: the float32 values rounded to nearest even (float16's subnormals included:
  // randn with std 1e-4 makes many), bfloat16 likewise.
  for (const double scale : {1.0, 1e-4}) {
    const auto f = made(bb::InitKind::randn, 0, scale, 5, bb::DType::float32, 4097);
    for (auto d : {bb::DType::float16, bb::DType::bfloat16}) {
      const auto h = made(bb::InitKind::randn, 0, scale, 5, d, 4097);
      std::vector<uint8_t> one(2);
      for (std::size_t i = 0; i < h.size(); ++i) {
        bb::store_element(d, one.data(), 0, f[i]);
        ASSERT_EQ(h[i], bb::load_element(d, one.data(), 0)) << bb::dtype_name(d) << " element " << i << " of " << f[i];
      }
    }
  }
  // A destination its wide stores cannot write aligned: made by the element-wise path, the same
  // distribution.
  const auto odd = made(bb::InitKind::randn, 0.0, 1.0, 3, bb::DType::float16, n, 2);
  EXPECT_NEAR(mean(odd), 0.0, 0.02);
  EXPECT_NEAR(stddev(odd), 1.0, 0.02);
  api.free(dev);
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

// A cached peak serves only within [0.5, 1.05] of the device's theoretical bandwidth: the peak is
// the floor a timing must not beat, so a cache file raised (or lowered) by anyone is measured
// again rather than believed.
TEST(Device, ACachedPeakServesOnlyNearTheTheoreticalBandwidth) {
  const nlohmann::json good = {{"copy_gbps", 3100.0}, {"strategy", "write-only kernel"}};
  EXPECT_TRUE(bb::usable_peak_entry(good, 3352.0));
  EXPECT_TRUE(bb::usable_peak_entry(good, 0.0));  // theoretical unknown: any positive figure
  EXPECT_FALSE(bb::usable_peak_entry({{"copy_gbps", 31000.0}}, 3352.0));  // above the theoretical peak
  EXPECT_TRUE(bb::usable_peak_entry({{"copy_gbps", 3352.0 * 1.05}}, 3352.0));
  EXPECT_FALSE(bb::usable_peak_entry({{"copy_gbps", 3352.0 * 1.06}}, 3352.0));
  EXPECT_FALSE(bb::usable_peak_entry({{"copy_gbps", 1000.0}}, 3352.0));  // below half of it
  EXPECT_FALSE(bb::usable_peak_entry({{"copy_gbps", 0.0}}, 0.0));
  EXPECT_FALSE(bb::usable_peak_entry({{"copy_gbps", "fast"}}, 3352.0));
  EXPECT_FALSE(bb::usable_peak_entry(nlohmann::json::array(), 3352.0));
}

// The host, not the probe behind its walls, writes the cache: a probe's answer with a measured
// peak is kept, one read from the cache or beyond the theoretical bandwidth is not.
TEST(Device, TheHostKeepsThePeaksAProbeMeasured) {
  const auto dir = std::filesystem::temp_directory_path() / ("bb_peaks_host_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("BACKENDBENCH_CACHE_DIR", dir.c_str(), 1);
  auto probe = [](const std::string& key, double gbps, bool cached) {
    return nlohmann::json{{"name", "cuda"},
                          {"available", true},
                          {"devices", {{{"name", "GPU"}, {"peak_bandwidth_gbps", 3352.0},
                                        {"measured_bandwidth", {{"copy_gbps", gbps}, {"strategy", "s"}, {"cached", cached}, {"key", key}}},
                                        {"measured_compute", nlohmann::json::array()}}}}};
  };
  EXPECT_TRUE(bb::read_device_peaks().empty());
  bb::remember_device_peaks(probe("v5|cuda|a", 3100.0, false));
  bb::remember_device_peaks(probe("v5|cuda|b", 3100.0, true));    // from the cache: not written again
  bb::remember_device_peaks(probe("v5|cuda|c", 99999.0, false));  // impossible: not kept
  // Answers of a run that measured nothing, or with fields of other types, keep nothing and throw nothing.
  bb::remember_device_peaks({{"name", "cuda"}, {"available", true}, {"devices", {{{"name", "GPU"}, {"measured_bandwidth", nullptr}}}}});
  auto odd = probe("v5|cuda|d", 3100.0, false);
  odd["devices"][0]["measured_bandwidth"]["cached"] = "no";
  bb::remember_device_peaks(odd);
  bb::remember_device_peaks(nlohmann::json::array());
  const auto peaks = bb::read_device_peaks();
  ::unsetenv("BACKENDBENCH_CACHE_DIR");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(peaks.contains("v5|cuda|a")) << peaks.dump();
  EXPECT_DOUBLE_EQ(peaks["v5|cuda|a"]["copy_gbps"].get<double>(), 3100.0);
  EXPECT_DOUBLE_EQ(peaks["v5|cuda|a"]["theoretical_gbps"].get<double>(), 3352.0);
  EXPECT_FALSE(peaks.contains("v5|cuda|b"));
  EXPECT_FALSE(peaks.contains("v5|cuda|c"));
  EXPECT_FALSE(peaks.contains("v5|cuda|d"));
}

// The device's error figures (runtime v8) are the host's: on the same buffers, max abs and rel
// error and the share of the tolerance used agree with allclose's Comparison, in every floating
// dtype, with poison, NaN and infinities left out of the figures as the host leaves them out.
TEST(Device, TheDevicesErrorFiguresAreTheHosts) {
  std::string why;
  bb::DeviceRuntime* rt = runtime_or_skip("cuda", why);
  if (!rt) GTEST_SKIP() << "no CUDA device: " << why;
  const auto& api = rt->api();
  ASSERT_EQ(api.set_device(0), 0);
  ASSERT_NE(api.error_figures, nullptr);
  const std::size_t n = (std::size_t{1} << 20) + 5;
  void *da = nullptr, *de = nullptr;
  ASSERT_EQ(api.malloc(&da, n * 8), 0);
  ASSERT_EQ(api.malloc(&de, n * 8), 0);
  for (bb::DType d : {bb::DType::float16, bb::DType::bfloat16, bb::DType::float32, bb::DType::float64}) {
    std::vector<uint8_t> a(n * bb::dtype_size(d)), e(a.size());
    for (std::size_t i = 0; i < n; ++i) {
      const double x = std::sin(0.001 * static_cast<double>(i)) * 4.0;
      bb::store_element(d, e.data(), i, x);
      bb::store_element(d, a.data(), i, x * (1.0 + 1e-3 * std::cos(0.37 * static_cast<double>(i))));
    }
    bb::store_element(d, a.data(), 17, NAN);       // not a figure
    bb::store_element(d, a.data(), 99, INFINITY);  // nor this
    bb::poison_element(d, a.data() + 1234 * bb::dtype_size(d));
    const bb::Tolerance tol{1e-3, 1e-2};
    const bb::Comparison host = bb::compare(d, a.data(), e.data(), n, tol);
    ASSERT_EQ(api.memcpy_h2d(da, a.data(), a.size()), 0);
    ASSERT_EQ(api.memcpy_h2d(de, e.data(), e.size()), 0);
    const DLDataType dl = bb::to_dlpack(d);
    double max_abs = -1, max_rel = -1, used = -1;
    ASSERT_EQ(api.error_figures(dl.code, dl.bits, da, de, n, tol.atol, tol.rtol, &max_abs, &max_rel, &used), 0) << bb::dtype_name(d);
    EXPECT_DOUBLE_EQ(max_abs, host.max_abs_error) << bb::dtype_name(d);
    EXPECT_DOUBLE_EQ(max_rel, host.max_rel_error) << bb::dtype_name(d);
    EXPECT_NEAR(used, host.tolerance_used, 1e-12 * std::max(1.0, host.tolerance_used)) << bb::dtype_name(d);
    EXPECT_GT(used, 0.0);
  }
  api.free(da);
  api.free(de);
}
