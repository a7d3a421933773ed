#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "host_buffer.hpp"
#include "run/allclose.hpp"
#include "run/tolerance.hpp"

namespace {
bb::Comparison cmp(std::vector<float> a, std::vector<float> e, bb::Tolerance tol) {
  return bb::compare(bb::DType::float32, a.data(), e.data(), a.size(), tol);
}
}  // namespace

TEST(Allclose, AllcloseSemantics) {
  const bb::Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(cmp({1.0f, 100.0f}, {1.0f, 100.09f}, tol).passed());
  auto c = cmp({1.0f, 100.0f, 3.0f}, {1.0f, 100.2f, 3.1f}, tol);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_mismatch, 1);
  EXPECT_NEAR(c.max_abs_error, 0.2, 1e-4);
  EXPECT_NEAR(c.max_rel_error, 0.1 / 3.1, 1e-4);
  EXPECT_FLOAT_EQ(static_cast<float>(c.actual_at_first), 100.0f);
}

TEST(Allclose, NanAndInfPositionsMustMatch) {
  const bb::Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(cmp({NAN, INFINITY, -INFINITY}, {NAN, INFINITY, -INFINITY}, tol).passed());
  EXPECT_EQ(cmp({NAN, 1.0f}, {0.0f, 1.0f}, tol).mismatches, 1);
  EXPECT_EQ(cmp({0.0f}, {NAN}, tol).mismatches, 1);
  EXPECT_EQ(cmp({INFINITY}, {-INFINITY}, tol).mismatches, 1);
  EXPECT_EQ(cmp({1e30f}, {INFINITY}, tol).mismatches, 1);
  // Counted apart: the errors are over finite pairs alone (a NaN is no "max abs error 0").
  const auto c = cmp({NAN, 2.0f, INFINITY, 5.0f}, {0.0f, 2.0f, 1.0f, 4.0f}, tol);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.nonfinite, 2);
  EXPECT_FLOAT_EQ(static_cast<float>(c.max_abs_error), 1.0f);
}

// A value variant's atol grows with the largest finite |expected| above 1; whether zeros would
// pass is read from the same scale (NaN or infinity expected: never).
TEST(Allclose, AScaledAtolAndZerosThatWouldPass) {
  bb::Tolerance tol{1e-5, 1e-3, true};
  EXPECT_TRUE(cmp({1e6f + 5.0f, 1.0f}, {1e6f, 1.0f}, tol).passed()) << "5 within 1e-5 * 1e6 + 1e-3 * 1e6";
  tol.scale_atol = false;
  EXPECT_TRUE(cmp({1e6f + 5.0f, 1.0f}, {1e6f, 1.0f}, tol).passed()) << "rtol alone covers the large one";
  EXPECT_FALSE(cmp({1e6f, 1.0f + 1e-3f}, {1e6f, 1.0f - 1e-3f}, tol).passed()) << "2e-3 off at 1, unscaled";
  tol.scale_atol = true;
  EXPECT_TRUE(cmp({1e6f, 1.0f + 1e-3f}, {1e6f, 1.0f - 1e-3f}, tol).passed()) << "within 1e-5 * 1e6 = 10";
  const std::vector<float> small{1e-6f, -2e-6f}, big{1e-6f, 3.0f}, odd{0.0f, NAN};
  auto scale = [](const std::vector<float>& v) { return bb::expected_scale(bb::DType::float32, v.data(), v.size()); };
  EXPECT_FLOAT_EQ(static_cast<float>(scale(big).max_abs), 3.0f);
  EXPECT_TRUE(scale(odd).nonfinite);
  EXPECT_TRUE(bb::zeros_would_pass(bb::Tolerance{1e-5, 1e-3}, scale(small)));
  EXPECT_FALSE(bb::zeros_would_pass(bb::Tolerance{1e-5, 1e-3}, scale(big)));
  EXPECT_FALSE(bb::zeros_would_pass(bb::Tolerance{1e-5, 1e-3, true}, scale(big)));
  EXPECT_FALSE(bb::zeros_would_pass(bb::Tolerance{1e-5, 1e-3}, scale(odd)));
}

TEST(Allclose, PoisonedElementsAreUnwritten) {
  bb::HostBuffer out(4 * sizeof(float));
  out.poison(bb::DType::float32);
  auto* o = reinterpret_cast<float*>(out.data());
  o[0] = 1.0f;
  o[1] = 2.0f;
  std::vector<float> expected{1.0f, 2.0f, 3.0f, 4.0f};
  auto c = bb::compare(bb::DType::float32, out.data(), expected.data(), 4, {1e-5, 1e-5});
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.unwritten, 2);
  EXPECT_EQ(c.first_mismatch, 2);
}

TEST(Allclose, IntegersAreExactByDefault) {
  std::vector<int32_t> a{1, 2, 3}, e{1, 2, 4};
  const auto tol = bb::default_tolerance(bb::DType::int32);
  EXPECT_EQ(tol.atol, 0.0);
  EXPECT_EQ(bb::compare(bb::DType::int32, a.data(), e.data(), 3, tol).mismatches, 1);
  std::vector<int64_t> big_a{(int64_t{1} << 60) + 1}, big_e{int64_t{1} << 60};  // equal as doubles
  EXPECT_EQ(bb::compare(bb::DType::int64, big_a.data(), big_e.data(), 1, tol).mismatches, 1);
}

TEST(Allclose, DefaultTolerancesFollowTorch) {
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float32).rtol, 1.3e-6);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float16).rtol, 1e-3);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::bfloat16).rtol, 1.6e-2);
  EXPECT_DOUBLE_EQ(bb::default_tolerance(bb::DType::float64).atol, 1e-7);
  bb::ToleranceTable op{{bb::DType::float32, {1e-3, 1e-3}}}, c{{bb::DType::float32, {1e-1, 0}}};
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float32, op, {}).atol, 1e-3);
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float32, op, c).atol, 1e-1);
  EXPECT_DOUBLE_EQ(bb::resolve_tolerance(bb::DType::float16, op, c).rtol, 1e-3);
}

TEST(Allclose, IndexFormatting) {
  EXPECT_EQ(bb::format_index(0, {4, 5}), "[0, 0]");
  EXPECT_EQ(bb::format_index(13, {4, 5}), "[2, 3]");
  EXPECT_EQ(bb::format_index(5, {6}), "[5]");
}

// A large output is compared in chunks on several threads: counts, maxima and the first
// mismatch are those of the whole (3M + 5 elements; faults near the start, in the middle and at
// the end; the largest error in a later chunk than the first mismatch).
TEST(Allclose, ALargeOutputComparedInChunksGivesTheWholesCounts) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 5;
  std::vector<float> e(n), a(n);
  for (std::size_t i = 0; i < n; ++i) e[i] = a[i] = static_cast<float>(i % 1000) * 0.5f + 1.0f;
  a[17] += 1.0f;            // first mismatch
  a[n / 2] += 40.0f;        // largest absolute error
  bb::poison_element(bb::DType::float32, &a[n - 1]);  // unwritten
  a[n - 2] = e[n - 2] * 3;  // largest relative error: 2
  const auto c = bb::compare(bb::DType::float32, a.data(), e.data(), n, {1e-5, 1e-5});
  EXPECT_EQ(c.count, static_cast<int64_t>(n));
  EXPECT_EQ(c.mismatches, 4);
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(c.first_mismatch, 17);
  EXPECT_FLOAT_EQ(static_cast<float>(c.actual_at_first), e[17] + 1.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(c.expected_at_first), e[17]);
  EXPECT_NEAR(c.max_abs_error, std::max(40.0, 2.0 * e[n - 2]), 1e-3);
  EXPECT_NEAR(c.max_rel_error, 2.0, 1e-6);
}

// Where no thread can be started (here: no address space left for a thread's stack, in a child
// process), every chunk runs on the calling thread and the Comparison is the same.
TEST(Allclose, WithoutThreadsTheChunksRunOnTheCallingThread) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 5;
  std::vector<float> e(n, 2.0f), a(n, 2.0f);
  a[5] = 3.0f;
  a[n - 3] = 9.0f;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream status("/proc/self/status");
    std::string line;
    long vm_kb = 0;
    while (std::getline(status, line))
      if (line.rfind("VmSize:", 0) == 0) vm_kb = std::stol(line.substr(7));
    const rlimit lim{static_cast<rlim_t>(vm_kb + 2048) * 1024, static_cast<rlim_t>(vm_kb + 2048) * 1024};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    // Threads that never end take what is left (a stack the allocator kept from an earlier
    // test among them), until one cannot start: the premise.
    bool threads_refused = false;
    for (int i = 0; i < 64 && !threads_refused; ++i) {
      try {
        std::thread([] { pause(); }).detach();
      } catch (const std::system_error&) {
        threads_refused = true;
      }
    }
    if (!threads_refused) _exit(4);
    const auto c = bb::compare(bb::DType::float32, a.data(), e.data(), n, {1e-5, 1e-5});
    _exit(c.mismatches == 2 && c.first_mismatch == 5 && c.count == static_cast<int64_t>(n) && c.max_abs_error == 7.0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died: signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a wrong Comparison; 3: setrlimit failed; 4: a thread could still start";
}

// How much of its tolerance the worst element used: a passing output's margin, reported on
// every test (results.json's errors.tolerance_used).
TEST(Allclose, TheShareOfTheToleranceUsed) {
  const bb::Tolerance tol{1e-3, 1e-2};
  // Allowed at 1.0: 1e-3 + 1e-2 = 0.011; 0.0055 off is half of it; at 10.0: 0.101, 0.0101 off is a tenth.
  auto c = cmp({1.0055f, 10.0101f}, {1.0f, 10.0f}, tol);
  EXPECT_TRUE(c.passed());
  EXPECT_NEAR(c.tolerance_used, 0.5, 1e-4);
  EXPECT_EQ(cmp({1.0f, 2.0f}, {1.0f, 2.0f}, tol).tolerance_used, 0.0);
  // Outside: above 1. Under a tolerance of 0, any difference is infinitely over.
  EXPECT_NEAR(cmp({1.022f}, {1.0f}, tol).tolerance_used, 2.0, 1e-3);
  EXPECT_TRUE(std::isinf(cmp({1.5f}, {1.0f}, bb::Tolerance{0, 0}).tolerance_used));
  // NaN and infinities are not figures: counted as mismatches, never as a share.
  EXPECT_NEAR(cmp({NAN, 1.0055f}, {1.0f, 1.0f}, tol).tolerance_used, 0.5, 1e-4);
  // The same in chunks on many threads as on one.
  std::vector<float> a(1 << 20, 1.0f), e(1 << 20, 1.0f);
  a[777777] = 1.0055f;
  EXPECT_NEAR(bb::compare(bb::DType::float32, a.data(), e.data(), a.size(), tol).tolerance_used, 0.5, 1e-4);
}
