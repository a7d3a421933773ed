#include "measure/device_timer.hpp"

#include "measure/cpu_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <map>
#include <tuple>
#include <thread>

#include <fmt/format.h>

namespace bb {

namespace {
using Clock = std::chrono::steady_clock;

// Two events, destroyed on every path.
struct EventPair {
  const bb_device_runtime& rt;
  void* start = nullptr;
  void* stop = nullptr;
  int error = 0;
  explicit EventPair(const bb_device_runtime& r) : rt(r) {
    error = rt.event_create(&start);
    if (!error) error = rt.event_create(&stop);
  }
  ~EventPair() {
    if (start) rt.event_destroy(start);
    if (stop) rt.event_destroy(stop);
  }
};

std::string describe(const bb_device_runtime& rt, int e) {
  const char* s = rt.error_string(e);
  return fmt::format("{} error {} ({})", rt.name, e, s ? s : "?");
}

// How long a blocking kernel waits for its release before giving up: the host enqueues a
// sample's launches well within this unless a launch itself blocks.
constexpr double kProbeBlockMs = 200;   // the first blocked call (finds calls that block the host)
constexpr double kSampleBlockMs = 2000;
// Launches queued behind one blocking kernel, at most: the launch queue is finite, and a host
// that fills it waits for the blocked stream.
constexpr std::size_t kMaxBlockedBatch = 200;
// An idle GPU's clocks take a while to come up: the first measurement in a process warms up for
// at least this long, unless the host saw the device timed moments ago
// (TimingOptions::device_warm), or the SM clock probes read kWarmClockSamples calls in a row at
// full clock (the probes see the SM clock only). (It does not cure the slow first case of a
// baseline worker seen on an H100: docs/PERFORMANCE.md, stability.)
constexpr double kFirstWarmup = 0.3;
constexpr std::size_t kWarmClockSamples = 20;
bool g_device_warm = false;

// Cold batches: at most this many samples per synchronisation (more queued work raises the
// front end's cost per launch: docs/PERFORMANCE.md), about this much GPU time per batch.
constexpr std::size_t kMaxColdBatch = 8;
constexpr double kColdBatchSeconds = 1e-3;
// Discard-evicted samples may not be faster than flush-evicted ones by more than this.
constexpr double kFlushGuard = 1.05;

// A batch of cold samples in flight: 2 events per sample and one after its closing probe, its
// blocking kernel's ticket, the probe slots it uses.
struct Batch {
  std::vector<void*> events;
  std::size_t k = 0;
  uint32_t ticket = 0;
  int slot = 0;
  Clock::time_point enqueued;
  bool pending = false;
};

// Enqueues and reads batches of cold samples (device_timer.hpp). `evict(i)` empties L2 before
// the batch's i-th sample; `launch` is the call.
class ColdBatcher {
 public:
  ColdBatcher(const bb_device_runtime& rt, void* stream, bool probes, double max_clock_mhz, double threshold)
      : rt_(rt), stream_(stream), probes_(probes), max_clock_mhz_(max_clock_mhz), threshold_(threshold) {}
  ~ColdBatcher() {
    for (auto& b : batches_)
      for (void* e : b.events)
        if (e) rt_.event_destroy(e);
  }

  Status enqueue(int which, std::size_t k, const std::function<int(std::size_t)>& evict, const std::function<int()>& launch) {
    Batch& b = batches_[which];
    b.slot = which;
    b.k = k;
    while (b.events.size() < 2 * k + 1) {
      void* e = nullptr;
      if (int rc = rt_.event_create(&e); rc) return make_error("creating events: " + describe(rt_, rc));
      b.events.push_back(e);
    }
    b.enqueued = Clock::now();
    if (probes_)
      if (int e = rt_.clock_probe(stream_, 2 * b.slot); e) return make_error("clock probe: " + describe(rt_, e));
    if (int e = rt_.block_stream_ticket(stream_, kSampleBlockMs, &b.ticket); e) return make_error("blocking kernel: " + describe(rt_, e));
    b.pending = true;
    auto fail = [&](std::string what) -> Status {
      rt_.release_stream();
      rt_.stream_synchronize(stream_);
      b.pending = false;
      return make_error(std::move(what));
    };
    for (std::size_t i = 0; i < k; ++i) {
      if (int e = evict(i); e) return fail("cache eviction: " + describe(rt_, e));
      if (int e = rt_.event_record(b.events[2 * i], stream_); e) return fail("event: " + describe(rt_, e));
      if (int rc = launch(); rc != 0) return fail(fmt::format("call returned {}", rc));
      if (int e = rt_.event_record(b.events[2 * i + 1], stream_); e) return fail("event: " + describe(rt_, e));
    }
    if (probes_)
      if (int e = rt_.clock_probe(stream_, 2 * b.slot + 1); e) return fail("clock probe: " + describe(rt_, e));
    if (int e = rt_.event_record(b.events[2 * k], stream_); e) return fail("event: " + describe(rt_, e));  // the batch's end
    rt_.release_stream();
    return Ok{};
  }

  // Waits for batch `which`; no samples (and *timed_out) when its blocking kernel gave up.
  Expected<std::vector<Sample>> collect(int which, bool* timed_out) {
    Batch& b = batches_[which];
    b.pending = false;
    *timed_out = false;
    if (int e = rt_.event_synchronize(b.events[2 * b.k]); e) return make_error(describe(rt_, e));
    const double host = seconds_since(b.enqueued);
    if (int e = rt_.get_last_error(); e) return make_error(describe(rt_, e));
    int out = 0;
    rt_.ticket_timed_out(b.ticket, &out);
    if (out) {
      *timed_out = true;
      return std::vector<Sample>{};
    }
    double clock = 0;
    bool throttled = false;
    if (probes_) {
      bb_clock_sample p[8]{};
      if (rt_.read_clock_probes(p, 8) == 0)
        clock = clock_mhz_between(p[2 * b.slot].sm_clock, p[2 * b.slot].global_ns, p[2 * b.slot + 1].sm_clock, p[2 * b.slot + 1].global_ns);
      throttled = is_throttled(clock, max_clock_mhz_, threshold_);
    }
    std::vector<Sample> samples;
    for (std::size_t i = 0; i < b.k; ++i) {
      float ms = 0;
      if (int e = rt_.event_elapsed_ms(&ms, b.events[2 * i], b.events[2 * i + 1]); e) return make_error("elapsed: " + describe(rt_, e));
      Sample s;
      s.seconds = s.region_seconds = ms * 1e-3;
      s.host_seconds = host / static_cast<double>(b.k);
      s.clock_mhz = clock;
      s.throttled = throttled;
      samples.push_back(s);
    }
    return samples;
  }

  bool pending(int which) const { return batches_[which].pending; }
  // Lets every queued batch go and waits for the stream: after an error or a timeout.
  void drain() {
    rt_.release_stream();
    rt_.stream_synchronize(stream_);
    batches_[0].pending = batches_[1].pending = false;
  }

 private:
  const bb_device_runtime& rt_;
  void* stream_;
  bool probes_;
  double max_clock_mhz_, threshold_;
  Batch batches_[2];
};

bool has_batches(const bb_device_runtime& rt) {
  return rt.struct_size >= offsetof(bb_device_runtime, event_synchronize) + sizeof(rt.event_synchronize) && rt.block_stream_ticket &&
         rt.ticket_timed_out && rt.event_synchronize && rt.launch_empty;
}

// The event pair's own cost for batches of `k` (device_timer.hpp): the median time between the
// two events with nothing between them, each pair preceded by the samples' own eviction, two
// batches in flight as when sampling. Cached per stream (a stream belongs to one device),
// batch size and kind of eviction.
Expected<double> event_pair_cost(const bb_device_runtime& rt, void* stream, std::size_t k, bool discard,
                                 const std::function<int(std::size_t)>& evict) {
  static std::map<std::tuple<void*, std::size_t, bool>, double> cache;
  if (auto it = cache.find({stream, k, discard}); it != cache.end()) return it->second;
  ColdBatcher batcher(rt, stream, false, 0, 0);
  auto nothing = [] { return 0; };
  std::vector<double> empty;
  for (int round = 0; round < 8; ++round) {
    for (int which = 0; which < 2; ++which)
      if (auto s = batcher.enqueue(which, k, evict, nothing); !s) return s.error();
    for (int which = 0; which < 2; ++which) {
      bool timed_out = false;
      auto samples = batcher.collect(which, &timed_out);
      if (!samples) return batcher.drain(), samples.error();
      if (round >= 2)  // warm-up
        for (const auto& x : *samples) empty.push_back(x.seconds);
    }
  }
  const double cost = empty.empty() ? 0.0 : summarize(empty).median;
  cache[{stream, k, discard}] = cost;
  return cost;
}

// Discard-evicted samples leave memory outside the call's buffers as it was: should they be
// faster than the flush-evicted ones by more than kFlushGuard, the call reads such memory
// (a table, a cache of its own) and only the flush-evicted samples are kept.
void apply_flush_guard(const std::vector<Sample>& taken, Measurement& m) {
  bool any_kept = false;
  for (const auto& t : taken) any_kept = any_kept || !t.throttled;
  std::vector<const Sample*> flushed, discarded;
  for (const auto& t : taken)
    if (!any_kept || !t.throttled) (t.flushed ? flushed : discarded).push_back(&t);
  if (flushed.size() < 3 || discarded.empty()) return;
  auto seconds = [](const std::vector<const Sample*>& v) {
    std::vector<double> out;
    for (const auto* x : v) out.push_back(x->seconds);
    return out;
  };
  const double f = summarize(seconds(flushed)).median, d = summarize(seconds(discarded)).median;
  if (!(f > kFlushGuard * d)) return;
  std::vector<double> host, clocks;
  m.measured_time = 0;
  for (const auto* x : flushed) {
    host.push_back(x->host_seconds);
    if (x->clock_mhz > 0) clocks.push_back(x->clock_mhz);
    m.measured_time += x->region_seconds;
  }
  m.samples = seconds(flushed);
  m.host_samples = host;
  m.stats = summarize(m.samples);
  m.host = summarize(host);
  m.clock_mhz = clocks.empty() ? 0 : summarize(clocks).median;
  m.notes.push_back(fmt::format("samples after a full L2 flush ran {:.1f}% slower than after discarding the call's own lines "
                                "(the call reads memory outside its arguments): only the {} flushed samples are kept",
                                (f / d - 1) * 100, flushed.size()));
}

uint64_t range_bytes(const std::vector<bb_device_range>& ranges) {
  uint64_t total = 0;
  for (const auto& r : ranges) total += r.bytes;
  return total;
}
}  // namespace

namespace {

// One measurement on a device (measure_device): the call, its runtime and stream, the options
// and the cold target, and what it has measured so far.
struct DeviceSampler {
  DeviceSampler(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream, double max_clock_mhz,
                const TimingOptions& options, const ColdTarget& target, Measurement& m, const EventPair& ev)
      : launch(launch), rt(rt), stream(stream), max_clock_mhz(max_clock_mhz), options(options), target(target), m(m), ev(ev),
        cold(options.mode == TimingMode::cold), paced(cold && target.fresh), blocking(options.blocking_kernel) {}

  // Nothing the call set to keep lines in L2 survives a flush (persisting lines, access-policy
  // windows: device_runtime.h reset_persisting): undone before every flush; with `settings`,
  // the host calls too (never while a blocking kernel holds the stream). Paced samples (fresh
  // inputs) reset the lines on the stream before each flush, as batched samples do, and the
  // settings once before the first and after the last: resetting those waits for the device.
  int unpersist(bool settings) const {
    return cold ? rt.reset_persisting(target.touched.data(), static_cast<int>(target.touched.size()), stream, settings ? 1 : 0) : 0;
  }

  // One timed region of `calls` launches; per-call GPU and host seconds, and the SM clock.
  Expected<Sample> region(std::size_t calls, bool flush, double block_ms) {
    const bool probes = max_clock_mhz > 0 && options.throttle_threshold > 0;
    if (probes)
      if (int e = rt.clock_probe(stream, 0); e) return make_error("clock probe: " + describe(rt, e));
    if (target.reset)
      if (int e = target.reset(); e) return make_error("rewriting the outputs: " + describe(rt, e));
    if (flush) {
      if (int e = unpersist(!paced); e) return make_error("persisting L2 reset: " + describe(rt, e));
      if (int e = rt.flush_cache(stream); e) return make_error("cache flush: " + describe(rt, e));
      // Wait for it: the host time below is then the call's alone, flush excluded. Except a paced
      // sample behind a blocking kernel: its inputs' making, its outputs' poison and its flush run
      // while the host queues the call (held by the blocking kernel, the start event after all of
      // them), and its host time includes them, as a batched sample's does its share of a batch.
      if (!(paced && block_ms > 0))
        if (int e = rt.stream_synchronize(stream); e) return make_error("cache flush: " + describe(rt, e));
    }
    if (block_ms > 0)
      if (int e = rt.block_stream(stream, block_ms); e) return make_error("blocking kernel: " + describe(rt, e));
    if (int e = rt.event_record(ev.start, stream); e) return make_error("event: " + describe(rt, e));
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < calls; ++i)
      if (int rc = launch(); rc != 0) {
        rt.release_stream();
        return make_error(fmt::format("call returned {}", rc));
      }
    if (int e = rt.event_record(ev.stop, stream); e) return rt.release_stream(), make_error("event: " + describe(rt, e));
    if (probes)
      if (int e = rt.clock_probe(stream, 1); e) return rt.release_stream(), make_error("clock probe: " + describe(rt, e));
    if (block_ms > 0) rt.release_stream();
    if (int e = rt.stream_synchronize(stream); e) return make_error(describe(rt, e));
    const double host = seconds_since(t0);
    if (int e = rt.get_last_error(); e) return make_error(describe(rt, e));
    float ms = 0;
    if (int e = rt.event_elapsed_ms(&ms, ev.start, ev.stop); e) return make_error("elapsed: " + describe(rt, e));
    Sample s;
    s.region_seconds = ms * 1e-3;
    s.seconds = s.region_seconds / static_cast<double>(calls);
    s.host_seconds = host / static_cast<double>(calls);
    if (block_ms > 0) {
      int timed_out = 0;
      rt.blocking_timed_out(&timed_out);
      if (timed_out) s.seconds = -1;  // the launches were not all queued in time: invalid
    }
    if (probes) {
      bb_clock_sample p[2]{};
      if (rt.read_clock_probes(p, 2) == 0) s.clock_mhz = clock_mhz_between(p[0].sm_clock, p[0].global_ns, p[1].sm_clock, p[1].global_ns);
      s.throttled = is_throttled(s.clock_mhz, max_clock_mhz, options.throttle_threshold);
    }
    return s;
  }

  // The warm-up. The first call runs behind a blocking kernel with a short timeout: a call that
  // blocks the host shows itself here, and is then timed without one. A first measurement on a
  // device not timed moments ago warms up for kFirstWarmup, unless the SM clock probes read
  // kWarmClockSamples calls in a row at full clock (unthrottled) once warmup_time has passed.
  // The mean call's seconds.
  Expected<double> warm_up() {
    double per_call = 0;
    const auto t0 = Clock::now();
    std::size_t timed = 0, at_full_clock = 0;
    const bool probes = max_clock_mhz > 0 && options.throttle_threshold > 0;
    auto warm_enough = [&] {
      const double spent = seconds_since(t0);
      if (spent < options.warmup_time || timed == 0) return false;
      if (g_device_warm || options.device_warm || spent >= kFirstWarmup) return true;
      return probes && at_full_clock >= kWarmClockSamples;
    };
    do {
      const double block_ms = blocking ? (m.warmup_calls == 0 ? kProbeBlockMs : kSampleBlockMs) : 0;
      auto s = region(1, cold, block_ms);
      if (!s) return make_error("during warm-up: " + s.error().message);
      ++m.warmup_calls;
      if (s->seconds < 0) {
        blocking = false;
        m.notes.push_back("the call blocks the host (a synchronising call?): timed without the blocking kernel, launch latency included");
        continue;
      }
      per_call += s->seconds;
      ++timed;
      at_full_clock = s->clock_mhz > 0 && !s->throttled ? at_full_clock + 1 : 0;
    } while (!warm_enough());
    g_device_warm = true;
    return per_call / static_cast<double>(timed);
  }

  // One sample, one per synchronisation: a paced one's inputs first (ColdTarget::fresh: the
  // host's go and the sample's inputs, before its eviction).
  Expected<Sample> sample() {
    if (paced) {
      const auto t0 = Clock::now();
      if (std::string e = target.fresh(); !e.empty()) return make_error("fresh inputs: " + e);
      ++m.paced;
      m.fresh_seconds += seconds_since(t0);
    }
    for (;;) {
      auto s = region(m.batch, cold, blocking ? kSampleBlockMs : 0);
      if (!s) return s;
      if (s->seconds < 0) {  // the blocking kernel gave up: drop the sample, stop blocking
        blocking = false;
        m.notes.push_back("a blocking kernel timed out while timing: the rest was timed without one");
        continue;
      }
      if (s->throttled && options.throttle_recovery_delay > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(options.throttle_recovery_delay));
      return s;
    }
  }

  // Cold behind a blocking kernel: batches of samples, the next enqueued while one runs.
  Status sample_batched(double per_call) {
    std::vector<Sample> taken;  // every sample the rule was given, in order (for the flush guard)
    const bool probes = max_clock_mhz > 0 && options.throttle_threshold > 0;
    int discard = 0;
    if (options.l2_discard && rt.discard_supported && rt.discard_cache && !target.touched.empty() && target.l2_bytes > 0 &&
        range_bytes(target.touched) <= 4 * static_cast<uint64_t>(target.l2_bytes))
      if (rt.discard_supported(&discard) != 0) discard = 0;
    m.eviction = discard ? "discard" : "flush";
    auto evict = [&](std::size_t i) {
      if (target.reset)
        if (int e = target.reset(); e) return e;
      if (int e = unpersist(false); e) return e;
      if (i == 0 || !discard) return rt.flush_cache(stream);
      return rt.discard_cache(target.touched.data(), static_cast<int>(target.touched.size()), stream);
    };
    const double est = per_call + (discard ? 5e-6 : 40e-6);
    const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(kColdBatchSeconds / std::max(est, 1e-9)), 1, kMaxColdBatch);
    m.samples_per_sync = k;
    auto cost = event_pair_cost(rt, stream, k, discard != 0, evict);
    if (!cost) return make_error("calibrating the events: " + cost.error().message);
    m.event_cost = *cost;

    ColdBatcher batcher(rt, stream, probes, max_clock_mhz, options.throttle_threshold);
    std::vector<Sample> ready;
    std::size_t next = 0;  // samples of `ready` handed out
    int oldest = 0;        // the batch to collect next
    bool fell_back = false;
    auto batched_sample = [&]() -> Expected<Sample> {
      for (;;) {
        if (fell_back) return sample();
        if (next < ready.size()) return ready[next++];
        ready.clear();
        next = 0;
        if (!batcher.pending(oldest))
          if (auto s = batcher.enqueue(oldest, k, evict, launch); !s) return s.error();
        // Keep one more in flight while this one runs (a lone sample per batch gains nothing).
        if (k > 1 && !batcher.pending(1 - oldest))
          if (auto s = batcher.enqueue(1 - oldest, k, evict, launch); !s) return s.error();
        bool timed_out = false;
        auto got = batcher.collect(oldest, &timed_out);
        if (!got) {
          batcher.drain();
          return got.error();
        }
        oldest = k > 1 ? 1 - oldest : oldest;
        if (timed_out) {
          batcher.drain();
          blocking = false;
          fell_back = true;
          m.notes.push_back("a blocking kernel timed out while timing: the rest was timed without one");
          continue;
        }
        for (std::size_t i = 0; i < got->size(); ++i) (*got)[i].flushed = i == 0 || !discard;
        ready = std::move(*got);
        if (!ready.empty() && ready.front().throttled && options.throttle_recovery_delay > 0)
          std::this_thread::sleep_for(std::chrono::duration<double>(options.throttle_recovery_delay));
      }
    };
    auto recorded = [&]() -> Expected<Sample> {
      auto s = batched_sample();
      if (s) taken.push_back(*s);
      return s;
    };
    auto status = sample_until_stopped(recorded, options.rule, m);
    batcher.drain();  // the batch still in flight, if any
    if (!status) return status.error();
    if (discard) apply_flush_guard(taken, m);
    return Ok{};
  }

  // One sample per synchronisation (paced, hot, or without a blocking kernel).
  Status sample_one_by_one() {
    m.eviction = cold ? "flush" : "";
    if (paced && blocking && has_batches(rt)) {  // one sample per synchronisation: the event pair's cost for that
      auto evict = [&](std::size_t) {
        if (int e = target.reset ? target.reset() : 0; e) return e;
        if (int e = unpersist(false); e) return e;
        return rt.flush_cache(stream);
      };
      auto cost = event_pair_cost(rt, stream, 1, false, evict);
      if (!cost) return make_error("calibrating the events: " + cost.error().message);
      m.event_cost = *cost;
    }
    if (auto s = sample_until_stopped([&] { return sample(); }, options.rule, m); !s) return s.error();
    return Ok{};
  }

  const std::function<int()>& launch;
  const bb_device_runtime& rt;
  void* stream;
  double max_clock_mhz;
  const TimingOptions& options;
  const ColdTarget& target;
  Measurement& m;
  const EventPair& ev;
  const bool cold, paced;
  bool blocking;
};

}  // namespace

Expected<Measurement> measure_device(const std::function<int()>& launch, const bb_device_runtime& rt, void* stream,
                                     double max_clock_mhz, const TimingOptions& options, const ColdTarget& target) {
  Measurement m;
  m.mode = options.mode;
  const auto begin = Clock::now();
  EventPair ev(rt);
  if (ev.error) return make_error("creating events: " + describe(rt, ev.error));
  DeviceSampler d(launch, rt, stream, max_clock_mhz, options, target, m, ev);
  if (int e = d.unpersist(true); e) return make_error("persisting L2 reset: " + describe(rt, e));
  auto per_call = d.warm_up();
  if (!per_call) return per_call.error();
  if (!d.cold && *per_call > 0 && *per_call < options.min_sample_time) {
    m.batch = static_cast<std::size_t>(std::ceil(options.min_sample_time / *per_call));
    if (d.blocking) m.batch = std::min(m.batch, kMaxBlockedBatch);
  }
  if (d.paced)
    if (int e = d.unpersist(true); e) return make_error("persisting L2 reset: " + describe(rt, e));  // after the warm-up's calls
  const bool batched = d.cold && d.blocking && has_batches(rt) && !d.paced;
  if (auto s = batched ? d.sample_batched(*per_call) : d.sample_one_by_one(); !s) return s.error();
  if (int e = d.unpersist(true); e) return make_error("persisting L2 reset: " + describe(rt, e));
  m.blocking = d.blocking;
  m.wall_time = seconds_since(begin);
  return m;
}

}  // namespace bb
