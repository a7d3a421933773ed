// The device timer and the runtime's measurement helpers, on a real GPU (skipped, with the
// runtime's reason, where there is none). Nothing here asserts a duration or a speed: only
// what the helpers must produce (a clock read at all and no faster than the device's maximum,
// a cached bandwidth, the blocking kernel's fallback) and what the timer reports.
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "devices/device.hpp"
#include "measure/device_peak.hpp"
#include "measure/device_timer.hpp"

namespace {

struct Cuda {
  bb::DeviceRuntime* rt = nullptr;
  void* stream = nullptr;
  void* buf = nullptr;
  static constexpr size_t kBytes = 64u << 20;
  std::string why;
  Cuda() {
    auto r = bb::DeviceRuntime::get("cuda");
    if (!r) {
      why = r.error().message;
      return;
    }
    rt = *r;
    rt->api().set_device(0);
    rt->api().stream_create(&stream);
    rt->api().malloc(&buf, kBytes);
  }
  ~Cuda() {
    if (buf) rt->api().free(buf);
    if (stream) rt->api().stream_destroy(stream);
  }
  double max_mhz() const { return rt->devices()[0].sm_clock_khz / 1e3; }
  // A call: a 64 MiB memset on the stream (a real device workload, enqueued without waiting).
  int launch() { return rt->api().memset(buf, 1, kBytes, stream); }
};

bb::TimingOptions quick(bb::TimingMode mode) {
  bb::TimingOptions o;
  o.mode = mode;
  o.rule.min_samples = 10;
  o.rule.max_samples = 30;
  o.rule.min_time = 0;
  o.rule.timeout = 2;
  o.warmup_time = 0.002;
  return o;
}

}  // namespace

TEST(DeviceTimer, ColdSamplesAreTakenBehindTheBlockingKernelWithTheClockRead) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  auto m = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->mode, bb::TimingMode::cold);
  EXPECT_EQ(m->batch, 1u);
  EXPECT_TRUE(m->blocking);
  EXPECT_GE(m->stats.samples + m->throttled, 10u);
  EXPECT_GT(m->stats.median, 0);
  EXPECT_EQ(m->host.samples, m->stats.samples);  // a host time for every kept sample
  // The SM clock over each sample: read, and no faster than the device's maximum (+10% slack
  // for the counters' granularity).
  EXPECT_GT(m->clock_mhz, 0) << "the clock probes read nothing";
  EXPECT_LT(m->clock_mhz, c.max_mhz() * 1.1);
}

// Fresh inputs (ColdTarget::fresh): every timed sample, not the warm-up, has its inputs made
// just before it, when the host says; samples are then one per synchronisation (a batch's inputs
// would all exist before its first call), the event pair calibrated for that.
TEST(DeviceTimer, FreshInputsAreMadeBeforeEveryTimedSampleOnePerSynchronisation) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  std::size_t made = 0, calls = 0, calls_when_made = 0;
  bb::ColdTarget target;
  target.fresh = [&]() -> std::string {
    ++made;
    calls_when_made = calls;
    return "";
  };
  auto m = bb::measure_device([&] { return ++calls, c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold), target);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->paced, made);
  EXPECT_EQ(made, m->stats.samples + m->throttled);
  EXPECT_EQ(calls, m->warmup_calls + made) << "one call per paced sample";
  EXPECT_EQ(calls_when_made + 1, calls) << "the last sample's inputs were made just before its call";
  EXPECT_EQ(m->samples_per_sync, 1u);
  EXPECT_GT(m->event_cost, 0);
  // And an error making them ends the measurement.
  target.fresh = [] { return std::string("no go came"); };
  auto failed = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold), target);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("fresh inputs: no go came"), std::string::npos) << failed.error().message;
}

// A paced sample's inputs are made on the stream and not waited for by the host (they run while
// it queues the call): they are still outside the timed region. Here each sample's "inputs" are
// 64 memsets of 64 MiB (milliseconds) before a call of one.
TEST(DeviceTimer, APacedSamplesInputsStayOutsideItsTimedRegion) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  bb::ColdTarget target;
  target.fresh = [&]() -> std::string {
    for (int i = 0; i < 64; ++i)
      if (int e = c.launch(); e) return "memset failed";
    return "";
  };
  auto paced = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold), target);
  ASSERT_TRUE(paced.ok()) << paced.error().message;
  auto plain = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(paced->blocking);
  EXPECT_LT(paced->stats.median, 4 * plain->stats.median) << "the inputs' making was timed: " << paced->stats.median << " s against "
                                                           << plain->stats.median << " s";
  EXPECT_GT(paced->host.median, 16 * plain->stats.median) << "the host time of a paced sample includes its inputs' making";
}

TEST(DeviceTimer, HotModeBatchesShortCalls) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  int calls = 0;
  // A tiny call (a 4-byte memset): far below min_sample_time, so samples batch it.
  auto m = bb::measure_device([&] { return ++calls, c.rt->api().memset(c.buf, 0, 4, c.stream); }, c.rt->api(), c.stream, c.max_mhz(),
                              quick(bb::TimingMode::hot));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->mode, bb::TimingMode::hot);
  EXPECT_GT(m->batch, 1u);
  EXPECT_LE(m->batch, 200u);  // the blocked queue's cap
  EXPECT_EQ(static_cast<size_t>(calls), m->warmup_calls + (m->stats.samples + m->throttled) * m->batch);
}

TEST(DeviceTimer, ACallThatBlocksTheHostIsTimedWithoutTheBlockingKernel) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  // The call waits for the whole device: behind a blocking kernel it would wait for ever.
  auto sync_call = [&] {
    if (int e = c.launch(); e) return e;
    return c.rt->api().synchronize();
  };
  auto m = bb::measure_device(sync_call, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->blocking);
  ASSERT_FALSE(m->notes.empty());
  EXPECT_NE(m->notes[0].find("blocks the host"), std::string::npos) << m->notes[0];
  EXPECT_GT(m->stats.samples, 0u);
}

TEST(DeviceTimer, CopyBandwidthIsMeasuredOnceAndCached) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  const auto dir = std::filesystem::temp_directory_path() / ("bb_peak_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("BACKENDBENCH_CACHE_DIR", dir.c_str(), 1);
  auto first = bb::device_peak_bandwidth(*c.rt, 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->cached);
  EXPECT_GT(first->copy_gbps, 0);  // what it reaches is a figure for docs/PERFORMANCE.md, not a test
  auto second = bb::device_peak_bandwidth(*c.rt, 0);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cached);
  EXPECT_DOUBLE_EQ(second->copy_gbps, first->copy_gbps);
  // The peak is the best of every strategy, each reported, and the cache keeps them all.
  ASSERT_EQ(first->strategies.size(), 6u);
  double best = 0;
  for (const auto& [name, gbps] : first->strategies) {
    EXPECT_FALSE(name.empty());
    EXPECT_GT(gbps, 0) << name;
    best = std::max(best, gbps);
  }
  EXPECT_DOUBLE_EQ(first->copy_gbps, best);
  EXPECT_EQ(second->strategy, first->strategy);
  EXPECT_EQ(second->strategies, first->strategies);
  // The compute peaks: FP32 everywhere; FP16 tensor from sm_70, BF16 from sm_80, by the
  // runtime's kernels and, where built with it, cuBLAS (what the figures are is
  // docs/PERFORMANCE.md's business); cached with the bandwidth.
  const std::string arch = c.rt->devices()[0].arch;
  const int sm = arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  std::vector<std::string> kinds;
  for (const auto& k : first->compute) {
    if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end()) kinds.push_back(k.kind);  // kernels, then cuBLAS
    EXPECT_GT(k.tflops, 0) << k.kind;
    EXPECT_FALSE(k.strategy.empty()) << k.kind;
  }
  std::vector<std::string> expected = {"fp32"};
  if (sm >= 70) expected.push_back("fp16 tensor");
  if (sm >= 80) expected.push_back("bf16 tensor");
  EXPECT_EQ(kinds, expected);
  ASSERT_EQ(second->compute.size(), first->compute.size());
  for (size_t i = 0; i < first->compute.size(); ++i) EXPECT_DOUBLE_EQ(second->compute[i].tflops, first->compute[i].tflops);
  EXPECT_TRUE(std::filesystem::exists(dir / "device_peaks.json"));
  ::unsetenv("BACKENDBENCH_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

// Cold samples come in batches behind one blocking kernel; with --l2-discard, where the device
// can drop L2 lines (sm_80 and later), the call's own buffers are discarded between samples and
// the full flush runs before the first sample of each batch; the events' own cost is calibrated.
TEST(DeviceTimer, ColdBatchesDiscardTheCallsLinesAndCalibrateTheEvents) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  const auto& props = c.rt->devices()[0];
  int supported = -1;
  ASSERT_EQ(c.rt->api().discard_supported(&supported), 0);
  const std::string arch = props.arch;
  const bool sm80 = arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 80;
  EXPECT_EQ(supported, sm80 ? 1 : 0) << props.arch;
  const bb::ColdTarget target{{{c.buf, Cuda::kBytes}}, props.l2_bytes};
  auto opts = quick(bb::TimingMode::cold);
  opts.l2_discard = true;
  auto m = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), opts, target);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->eviction, supported ? "discard" : "flush");
  // Without --l2-discard: the flush, in batches too.
  auto f = bb::measure_device([&] { return c.launch(); }, c.rt->api(), c.stream, c.max_mhz(), quick(bb::TimingMode::cold), target);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->eviction, "flush");
  EXPECT_GT(f->samples_per_sync, 1u);
  EXPECT_GT(f->event_cost, 0);
  EXPECT_GT(m->samples_per_sync, 1u);  // a 64 MiB memset is far below the batch's 1 ms
  EXPECT_LE(m->samples_per_sync, 8u);
  EXPECT_GT(m->event_cost, 0);                // calibrated
  EXPECT_LT(m->event_cost, m->stats.median);  // the pair costs less than a region around a 64 MiB memset
  EXPECT_GE(m->stats.samples, 10u);
  EXPECT_TRUE(m->blocking);
}

// A call that reads memory outside the buffers it is timed with (here a 16 MiB copy from a
// buffer the timer is not told of) finds that memory still in L2 after a discard: the samples
// after the full flush are slower, and only they are kept, with a note.
TEST(DeviceTimer, ACallReadingMemoryOutsideItsBuffersIsTimedOnFlushedSamplesOnly) {
  Cuda c;
  if (!c.rt) GTEST_SKIP() << "no CUDA device: " << c.why;
  int supported = 0;
  c.rt->api().discard_supported(&supported);
  if (!supported) GTEST_SKIP() << "the device cannot drop L2 lines: every sample is flushed";
  constexpr size_t kCopy = 16u << 20;
  void* other = nullptr;
  ASSERT_EQ(c.rt->api().malloc(&other, kCopy), 0);
  const bb::ColdTarget target{{{c.buf, kCopy}}, c.rt->devices()[0].l2_bytes};
  auto opts = quick(bb::TimingMode::cold);
  opts.rule.min_samples = opts.rule.max_samples = 64;  // 8 batches: 8 flushed samples
  opts.l2_discard = true;
  auto m = bb::measure_device([&] { return c.rt->api().memcpy_d2d(c.buf, other, kCopy, c.stream); }, c.rt->api(), c.stream,
                              c.max_mhz(), opts, target);
  c.rt->api().free(other);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->eviction, "discard");
  const bool noted = std::any_of(m->notes.begin(), m->notes.end(), [](const std::string& n) { return n.find("only the") != std::string::npos; });
  EXPECT_TRUE(noted) << "samples kept: " << m->stats.samples;
  EXPECT_LT(m->stats.samples, 64u);  // the discard-evicted ones were dropped
}
