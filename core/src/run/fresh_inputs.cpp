#include "run/fresh_inputs.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "dtype.hpp"
#include "host_buffer.hpp"
#include "init.hpp"
#include "measure/cpu_pin.hpp"
#include "parallel.hpp"
#include "protocol/message_channel.hpp"
#include "protocol/worker_protocol.hpp"

namespace bb {

std::vector<std::string> repeating_inputs(const ConcreteCase& c) {
  std::vector<std::string> names;
  for (const auto& t : c.inputs)
    if (!varies_with_seed(t.init.kind)) names.push_back(t.name);
  return names;
}

namespace {

// A 32-bit integer hash (Wellons' lowbias32): every bit of the input reaches every bit of the
// output; cheap enough to vectorise.
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
inline float unit(uint32_t h) { return static_cast<float>(h >> 8) * (1.0f / 16777216.0f); }  // [0, 1)

// ln x for x in (0, 1]: the exponent, and 2 atanh(s) for the mantissa m (s = (m - 1) / (m + 1)
// in [0, 1/3)) to s^9: about 1e-7 relative.
inline float log_unit(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 127);
  const uint32_t mb = (bits & 0x7fffffU) | 0x3f800000U;
  float m;
  std::memcpy(&m, &mb, 4);
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  const float poly = s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
  return e * 0.69314718f + poly;
}

// sin and cos of 2 pi u, u in [0, 1): Taylor polynomials of the half angle (in [-pi/2, pi/2),
// to degree 11 and 12), then the double angle.
inline void sincos_turn(float u, float* sn, float* cs) {
  const float phi = (u - 0.5f) * 3.14159265f, p2 = phi * phi;  // half of 2 pi (u - 1/2)
  const float sp = phi * (1.0f + p2 * (-1.0f / 6 + p2 * (1.0f / 120 + p2 * (-1.0f / 5040 + p2 * (1.0f / 362880 + p2 * (-1.0f / 39916800))))));
  const float cp = 1.0f + p2 * (-0.5f + p2 * (1.0f / 24 + p2 * (-1.0f / 720 + p2 * (1.0f / 40320 + p2 * (-1.0f / 3628800 + p2 * (1.0f / 479001600))))));
  *sn = -2.0f * sp * cp;         // sin(2 pi u) = -sin(2 phi)
  *cs = -(1.0f - 2.0f * sp * sp);  // cos(2 pi u) = -cos(2 phi)
}

// Values of `kind` for elements [lo, hi) into `out` (floats), keyed by (k0, k1). On x86-64 a
// second copy for AVX2 (8 lanes, and 32-bit multiplies SSE2 lacks), picked at load where the CPU
// has it: the same operations in the same order, so the same values either way.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void fresh_floats(InitKind kind, double a, double b, uint32_t k0, uint32_t k1, std::size_t lo, std::size_t hi, float* out) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b), span = static_cast<float>(b - a);
  const auto hash = [&](std::size_t i) { return mix32(mix32(static_cast<uint32_t>(i) ^ k0) + (k1 ^ static_cast<uint32_t>(i >> 32) * 0x9e3779b9U)); };
  switch (kind) {
    case InitKind::uniform: {  // [a, b): a float product may round up to b itself
      const float top = fb > fa ? std::nextafter(fb, fa) : fa;
      for (std::size_t i = lo; i < hi; ++i) out[i - lo] = std::min(top, fa + span * unit(hash(i)));
      break;
    }
    case InitKind::randint: {  // [a, b): ceil(a) + floor(u * range), u of 24 bits
      const double range = std::max(1.0, std::ceil(b) - std::ceil(a));
      const float base = static_cast<float>(std::ceil(a));  // |a|, |b| <= 2^24 (fill_fresh): exact in float
      const float fr = static_cast<float>(range), top = fr - 1.0f;
      for (std::size_t i = lo; i < hi; ++i) out[i - lo] = base + std::min(top, static_cast<float>(static_cast<int32_t>(unit(hash(i)) * fr)));
      break;
    }
    default: {  // randn: a + b z, z of a Box-Muller pair per two elements (2k, 2k + 1)
      const auto pair = [&](std::size_t p, float* cs, float* sn) {
        const float u1 = (static_cast<float>(hash(p) >> 8) + 1.0f) * (1.0f / 16777216.0f);  // (0, 1]
        const float r = std::sqrt(-2.0f * log_unit(u1));
        sincos_turn(unit(hash(p + 1)), sn, cs);
        *cs = fa + fb * r * *cs;
        *sn = fa + fb * r * *sn;
      };
      std::size_t i = lo;
      float c, z;
      if (i & 1) {  // the second of a pair
        pair(i - 1, &c, &z);
        out[0] = z;
        ++i;
      }
      const std::size_t pairs = (hi - i) / 2;
      float* o = out + (i - lo);
      for (std::size_t k = 0; k < pairs; ++k) pair(i + 2 * k, &o[2 * k], &o[2 * k + 1]);
      i += 2 * pairs;
      if (i < hi) {  // the first of a pair
        pair(i, &c, &z);
        out[i - lo] = c;
      }
    }
  }
}

// float -> half precision bits, rounded to nearest even (overflow to infinity, NaN kept a NaN,
// subnormals by a float addition that rounds them): branch-free, so that the loop vectorises.
inline uint16_t to_half(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  const uint32_t sign = f & 0x80000000U;
  f ^= sign;
  const uint32_t magic_bits = 126U << 23;  // 0.5f: a subnormal half's bits appear in the low mantissa
  float small;
  std::memcpy(&small, &f, 4);
  float magic;
  std::memcpy(&magic, &magic_bits, 4);
  small += magic;
  uint32_t sb;
  std::memcpy(&sb, &small, 4);
  const uint32_t subnormal = sb - magic_bits;
  const uint32_t normal = (f + ((15U - 127U) << 23) + 0xfffU + ((f >> 13) & 1U)) >> 13;
  const uint32_t big = f > (255U << 23) ? 0x7e00U : 0x7c00U;
  const uint32_t h = f >= (143U << 23) ? big : f < (113U << 23) ? subnormal : normal;
  return static_cast<uint16_t>(h | (sign >> 16));
}
// float -> bfloat16 bits, rounded to nearest even (the values made here are finite).
inline uint16_t to_bfloat16(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  return static_cast<uint16_t>((f + 0x7fffU + ((f >> 16) & 1U)) >> 16);
}

}  // namespace

Status fill_fresh(const ConcreteTensor& t, void* data, uint64_t seed, const std::filesystem::path& dir, bool threads) {
  const InitKind kind = t.init.kind;
  if ((kind != InitKind::randn && kind != InitKind::uniform && kind != InitKind::randint) || t.init.twist != 0)
    return fill_tensor(t, data, seed, dir);  // a value variant's twist: the generators' own code
  // Integers a float holds exactly only up to 2^24: wider ones come from the manifest's exact
  // generator (slower, as fresh).
  constexpr double kExact = 16777216.0;
  if (kind == InitKind::randint &&
      (std::abs(std::ceil(t.init.a)) > kExact || std::abs(std::ceil(t.init.b)) > kExact || std::ceil(t.init.b) - std::ceil(t.init.a) > kExact))
    return fill_tensor(t, data, seed, dir);
  const auto n = static_cast<std::size_t>(t.numel());
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for_each_chunk(n, threads ? chunk_count(n, std::size_t{1} << 18) : 1, [&](std::size_t, std::size_t lo, std::size_t hi) {
    if (t.dtype == DType::float32) {
      fresh_floats(kind, t.init.a, t.init.b, k0, k1, lo, hi, static_cast<float*>(data) + lo);
      return;
    }
    float tmp[1024];
    auto* half = static_cast<uint16_t*>(data);
    for (std::size_t at = lo; at < hi; at += 1024) {
      const std::size_t end = std::min(hi, at + 1024);
      fresh_floats(kind, t.init.a, t.init.b, k0, k1, at, end, tmp);
      if (t.dtype == DType::float16) {
        for (std::size_t i = at; i < end; ++i) half[i] = to_half(tmp[i - at]);
      } else if (t.dtype == DType::bfloat16) {
        for (std::size_t i = at; i < end; ++i) half[i] = to_bfloat16(tmp[i - at]);
      } else {
        for (std::size_t i = at; i < end; ++i) store_element(t.dtype, data, i, tmp[i - at]);
      }
    }
  });
  return Ok{};
}

FreshInputs::FreshInputs(const ConcreteCase& c, std::filesystem::path dir, bool on_device) : c_(c), dir_(std::move(dir)), on_device_(on_device) {
  const auto repeating = repeating_inputs(c);
  for (const auto& t : c.inputs) varies_.push_back(std::find(repeating.begin(), repeating.end(), t.name) == repeating.end());
}

// Each input's seed: the sample's, mixed with its name (its values independent of the others').
// The inputs that cannot vary are on the stage already (the worker lays the case's inputs there).
std::string FreshInputs::make(uint8_t* stage, uint8_t* blob, uint64_t seed) const {
  const BlobLayout in = inputs_layout(c_);
  for (std::size_t i = 0; i < c_.inputs.size(); ++i) {
    const auto& t = c_.inputs[i];
    if (stage && !varies_[i]) continue;
    uint8_t* at = stage ? stage + layout_.offsets[i] + HostBuffer::kGuardBytes : blob + in.offsets[i];
    if (auto r = fill_fresh(t, at, mix_seed(seed, t.name), dir_, false); !r) return r.error().message;
  }
  return "";
}

Expected<SealedBlob> FreshInputs::inputs_of(uint64_t seed) const {
  std::string error;
  auto blob = SealedBlob::create(inputs_layout(c_).total, [&](uint8_t* p) { error = make(nullptr, p, seed); }, "bb-fresh-inputs");
  if (!blob) return blob.error();
  if (!error.empty()) return make_error(error);
  return blob;
}

FreshInputs::~FreshInputs() {
  for (bool baseline : {false, true}) {
    Side& s = side(baseline);
    if (s.server.joinable()) end(baseline);
    if (s.base) munmap(s.base, layout_.total);
  }
}

std::string FreshInputs::attach(bool baseline, Executor& worker, const std::string& role, double timeout) {
  Side& s = side(baseline);
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return fmt::format("socketpair: {}", std::strerror(errno));
  UniqueFd mine(pair[0]), theirs(pair[1]);
  ExecOutcome out = worker.execute(request_json(PaceRequest{role}), timeout, theirs.get());
  if (out.status != ExecOutcome::Status::ok || !out.reply.value("error", "").empty())
    return out.status != ExecOutcome::Status::ok ? "its worker: " + out.detail : out.reply.value("error", "");
  // A worker that reads nothing more (no stage, no go) cannot hold the host: its sends time out.
  const timeval limit{5, 0};
  setsockopt(mine.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  s.pacing = std::move(mine);
  s.attached = true;
  return "";
}

// A new stage for the side's next block (a memfd: new pages, the block's own placement), sent
// to its worker, which lays its buffers over it when the block begins. "" or why not.
std::string FreshInputs::next_stage(Side& s) {
  UniqueFd stage(memfd_create("bb-fresh-stage", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!stage || ftruncate(stage.get(), static_cast<off_t>(layout_.total)) != 0) return fmt::format("the stage: {}", std::strerror(errno));
  // Its size sealed: a worker that shrank it would have the host's writes fault (SIGBUS).
  if (fcntl(stage.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return fmt::format("the stage's seals: {}", std::strerror(errno));
  // No worker started later inherits it (a stage is never sealed for writes: one that a fork
  // caught in between only costs that child the mapping until it execs; no lock on this path,
  // which serves timed blocks).
  void* p = mmap(nullptr, layout_.total, PROT_READ | PROT_WRITE, MAP_SHARED, stage.get(), 0);
  if (p != MAP_FAILED) madvise(p, layout_.total, MADV_DONTFORK);
  if (p == MAP_FAILED) return fmt::format("the stage could not be mapped: {}", std::strerror(errno));
  if (s.base) munmap(s.base, layout_.total);
  s.base = static_cast<uint8_t*>(p);
  if (!send_packet(s.pacing.get(), "stage", {stage.get()})) return "the stage could not be sent";
  return "";
}

// The buffers sample `sample` left, in place of those kept before (reservoir sampling: after n
// samples each one is the kept one with odds 1/n, however many the worker chooses to run).
std::string FreshInputs::keep(Side& s, std::size_t sample, uint64_t seed) {
  if (on_device_) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string e = s.keep_on_device ? s.keep_on_device(sample) : "no checker keeps its samples";
    s.served.keep_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!e.empty()) return e;
  } else {
    s.kept_bytes.resize(layout_.total);
    std::memcpy(s.kept_bytes.data(), s.base, layout_.total);  // on this thread alone: other cores may be timing
  }
  s.kept_sample = sample;
  s.kept_seed = seed;
  s.have_kept = true;
  return "";
}

namespace {
constexpr std::chrono::microseconds kSpinBeforeSleep{100};
}  // namespace

void FreshInputs::serve(Side& s, bool keeping, int cpu) {
  Served& out = s.served;
  if (cpu >= 0) pin_threads({static_cast<long>(gettid())}, cpu);
  std::size_t next = 0;  // the sample whose inputs are asked for next
  uint64_t previous_seed = 0;
  std::optional<std::chrono::steady_clock::time_point> went;  // when the last go was sent
  std::random_device entropy;
  std::mt19937_64 pick((static_cast<uint64_t>(entropy()) << 32) ^ entropy());
  for (;;) {
    pollfd fds[2] = {{s.pacing.get(), POLLIN, 0}, {s.stop_read.get(), POLLIN, 0}};
    // A device case's samples are short and back to back: the worker's word is awaited spinning
    // a little first (a sleeping thread's wake-up is most of a round trip), then asleep.
    int ready = 0;
    if (on_device_)
      for (const auto spin = std::chrono::steady_clock::now(); ready == 0 && std::chrono::steady_clock::now() - spin < kSpinBeforeSleep;)
        ready = poll(fds, 2, 0);
    if (ready == 0) ready = poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      out.error = fmt::format("poll: {}", std::strerror(errno));
      break;
    }
    // Stopped (the block's reply came), whatever the worker still sends.
    if ((fds[1].revents & (POLLIN | POLLHUP)) && !(fds[0].revents & POLLIN)) return;
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      char what = 0;  // what it sent before its reply ('l') is still read; then no more
      if (recv(s.pacing.get(), &what, 1, MSG_DONTWAIT) == 1 && what == kFreshLast && next > 0) {
        if (keeping && pick() % next == 0)
          if (std::string e = keep(s, next - 1, previous_seed); !e.empty()) out.error = "keeping a sample: " + e;
        out.saw_last = true;
      }
      return;
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char what = 0;
    const ssize_t n = recv(s.pacing.get(), &what, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;  // its worker is gone: the block's reply says how
    const bool done = what == kFreshDone || what == kFreshLast;
    if (done && went) out.paced_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - *went).count());
    if ((what == kFreshReady) != (next == 0) || (!done && what != kFreshReady)) {
      out.error = fmt::format("its worker paced sample {} out of turn (byte {})", next, static_cast<int>(what));
      break;
    }
    // The buffers of the sample just ended: kept with odds 1 / (its number), in place of the
    // sample kept before.
    if (done && keeping && pick() % next == 0)
      if (std::string e = keep(s, next - 1, previous_seed); !e.empty()) {
        out.error = "keeping a sample: " + e;
        break;
      }
    if (what == kFreshLast) {
      out.saw_last = true;
      return;
    }
    const auto t1 = std::chrono::steady_clock::now();
    previous_seed = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
    if (std::string e = on_device_ ? "" : make(s.base, nullptr, previous_seed); !e.empty()) {
      out.error = "inputs: " + e;
      break;
    }
    out.make_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    ++out.samples;
    ++next;
    // A device case's go carries the seed, from which its worker makes the inputs there.
    char go[kFreshSeedGoBytes] = {kFreshGo};
    std::memcpy(go + 1, &previous_seed, sizeof previous_seed);
    const std::size_t go_bytes = on_device_ ? kFreshSeedGoBytes : 1;
    went = std::chrono::steady_clock::now();
    if (send(s.pacing.get(), go, go_bytes, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(go_bytes)) {  // a worker that does not read its go
      out.error = fmt::format("its worker did not take the go of sample {}", next);
      break;
    }
  }
  shutdown(s.pacing.get(), SHUT_RDWR);  // its worker stops waiting: the block ends in an error
}

std::string FreshInputs::begin(bool baseline, bool keeping, int cpu, KeepOnDevice keep_on_device) {
  Side& s = side(baseline);
  if (s.server.joinable()) end(baseline);
  s.served = Served{};
  s.have_kept = false;
  s.keep_on_device = std::move(keep_on_device);
  if (on_device_ && keeping && !s.keep_on_device) return "a device case's samples are kept by the checker, and none was given";
  if (std::string e = on_device_ ? "" : next_stage(s); !e.empty()) return e;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  s.stop_read.reset(p[0]);
  s.stop_write.reset(p[1]);
  s.server = std::thread([this, &s, keeping, cpu] { serve(s, keeping, cpu); });
  return "";
}

FreshInputs::Served FreshInputs::end(bool baseline) {
  Side& s = side(baseline);
  if (s.server.joinable()) {
    const char stop = 0;
    if (write(s.stop_write.get(), &stop, 1) != 1) {
    }
    s.server.join();
  }
  s.stop_read.reset();
  s.stop_write.reset();
  if (s.have_kept && on_device_) {
    s.served.kept = Kept{s.kept_sample, s.kept_seed, SealedBlob{}};
  } else if (s.have_kept) {
    auto blob = SealedBlob::create(layout_.total, [&](uint8_t* p) { std::memcpy(p, s.kept_bytes.data(), layout_.total); }, "bb-fresh-kept");
    if (blob) s.served.kept = Kept{s.kept_sample, s.kept_seed, std::move(*blob)};
    else if (s.served.error.empty()) s.served.error = "the kept sample's buffers: " + blob.error().message;
  }
  return std::move(s.served);
}

}  // namespace bb
