// The host's audit of reported timings (clock_audit.hpp) on controlled blocks: honest pairs
// pass, a clock forged slower inside the implementation's calls is caught, so are calls that do
// the work only when checked and times below physics.
#include <gtest/gtest.h>

#include "measure/clock_audit.hpp"

namespace {

// A block as a worker reports it and the host times it: `n` samples of `reported` seconds each
// (what the worker's clock said), `real` seconds each in truth, `overhead` per sample outside
// the timed region, `fixed` per block, one warm-up call.
bb::BlockRecord block(double reported, double real, std::size_t n, double overhead = 20e-6, double fixed = 150e-6) {
  bb::BlockRecord b;
  b.m.samples.assign(n, reported);
  b.m.host_samples = b.m.samples;
  b.m.batch = 1;
  b.m.warmup_calls = 1;
  b.m.stats = bb::summarize(b.m.samples);
  b.m.measured_time = reported * static_cast<double>(n);
  b.m.wall_time = static_cast<double>(n) * (real + overhead) + real;  // as the worker's clock reads it when honest
  b.host_seconds = fixed + static_cast<double>(n) * (real + overhead) + real;
  return b;
}

std::vector<bb::BlockRecord> blocks(double reported, double real, std::size_t n, double jitter = 0.0) {
  std::vector<bb::BlockRecord> out;
  for (int k = 0; k < 16; ++k) out.push_back(block(reported * (1 + jitter * (k % 3)), real * (1 + jitter * (k % 3)), n));
  return out;
}

}  // namespace

TEST(ClockAudit, HonestPairsPass) {
  // Faster than the baseline, slower, equal: all honest.
  EXPECT_FALSE(bb::audit_clock(blocks(100e-6, 100e-6, 50), blocks(400e-6, 400e-6, 20)));
  EXPECT_FALSE(bb::audit_clock(blocks(400e-6, 400e-6, 20), blocks(100e-6, 100e-6, 50)));
  EXPECT_FALSE(bb::audit_clock(blocks(2e-6, 2e-6, 500, 0.05), blocks(2e-6, 2e-6, 500, 0.05)));
  // Large calls with few samples each.
  EXPECT_FALSE(bb::audit_clock(blocks(50e-3, 50e-3, 3), blocks(90e-3, 90e-3, 3)));
}

TEST(ClockAudit, AClockForgedSlowerInsideTheCallsIsCaught) {
  // The worker's clock runs 16x slow inside the plugin's calls: it reports 25 us for 400 us.
  auto why = bb::audit_clock(blocks(25e-6, 400e-6, 20), blocks(400e-6, 400e-6, 20));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("host's clock says its calls took about 400"), std::string::npos) << *why;
  // Work done outside the timed region looks the same.
  EXPECT_TRUE(bb::audit_clock(blocks(10e-6, 200e-6, 40), blocks(150e-6, 150e-6, 40)));
}

TEST(ClockAudit, TimeOtherProcessesTookIsNoForgedClock) {
  // Honest 2 us calls, 500 a block; another process held the implementation's core for 5 ms of
  // each of its blocks (a test beside it, a job on its pinned core), never the baseline's.
  auto busy = blocks(2e-6, 2e-6, 500);
  for (auto& b : busy) b.host_seconds += 5e-3;
  EXPECT_TRUE(bb::audit_clock(busy, blocks(2e-6, 2e-6, 500)));  // read as a forged clock, unless...
  for (auto& b : busy) b.foreign_wait = 5e-3;                   // ...the kernel's account says whose time it was
  EXPECT_FALSE(bb::audit_clock(busy, blocks(2e-6, 2e-6, 500)));
  // A forged clock on a busy machine is still one: only the wait is taken out.
  auto forged = blocks(25e-6, 400e-6, 20);
  for (auto& b : forged) b.host_seconds += 3e-3, b.foreign_wait = 3e-3;
  EXPECT_TRUE(bb::audit_clock(forged, blocks(400e-6, 400e-6, 20)));
  // The baseline's wait is taken out of its fixed cost too (else it hides an implementation's excess).
  auto base = blocks(150e-6, 150e-6, 40);
  for (auto& b : base) b.host_seconds += 5e-3, b.foreign_wait = 5e-3;
  EXPECT_TRUE(bb::audit_clock(blocks(10e-6, 200e-6, 40), base));
}

TEST(ClockAudit, TooFewPairsSayNothing) { EXPECT_FALSE(bb::audit_clock(blocks(25e-6, 400e-6, 20), {})); }

TEST(ClockAudit, WorkOnlyWhereCheckedIsCaught) {
  auto honest = blocks(100e-6, 100e-6, 20);
  EXPECT_FALSE(bb::audit_checked_calls(honest));
  auto lazy = honest;
  for (auto& b : lazy) {
    b.m.samples.assign(20, 1e-6);
    b.m.samples.back() = 100e-6;  // only the last call of each block (the one checked) works
    b.m.stats = bb::summarize(b.m.samples);
  }
  auto why = bb::audit_checked_calls(lazy);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("only where it is checked"), std::string::npos) << *why;
}

TEST(ClockAudit, BelowThePhysicalFloor) {
  // 64 MB at 20 GB/s take 3.2 ms: 1 ms cannot be real, 2 ms can (within the 2x margin).
  EXPECT_TRUE(bb::audit_floor(1e-3, 64e6, 20e9));
  EXPECT_FALSE(bb::audit_floor(2e-3, 64e6, 20e9));
  EXPECT_FALSE(bb::audit_floor(1e-9, std::nullopt, 20e9));  // no work declared
  EXPECT_FALSE(bb::audit_floor(1e-9, 64e6, 0));             // no peak known
}
