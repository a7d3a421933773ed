// The shipped references compute on a CUDA device (their <op>_reference_cuda.cu) what their CPU
// code computes: every case of every shipped op that runs on CUDA, the GPU-sized ones included,
// is run through the test driver with the reference's CUDA version as the implementation under
// test and its CPU version as the reference, and must PASS within the op's tolerances. Skipped
// where no CUDA device answers, or where the build has no CUDA references.
#include <gtest/gtest.h>

#include <filesystem>

#include "plan/backward_case.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "plugin_library.hpp"
#include "run/judge.hpp"

namespace fs = std::filesystem;

TEST(GpuReference, ShippedReferencesComputeOnCudaWhatTheyComputeOnTheCpu) {
  int compared = 0, ops_with_cuda = 0;
  for (const auto& dir : fs::directory_iterator(BB_SHIPPED_ROOT)) {
    const std::string op = dir.path().filename().string();
    fs::path library;
    for (const auto& f : fs::directory_iterator(dir.path()))
      if (f.path().filename().string().ends_with("_reference.so")) library = f.path();
    if (library.empty()) continue;
    auto plugin = bb::load_plugin(library, op);
    ASSERT_TRUE(plugin.ok()) << plugin.error().message;
    const auto& devices = plugin->info.devices;
    if (std::find(devices.begin(), devices.end(), "cuda") == devices.end()) continue;
    ++ops_with_cuda;
    auto manifest = bb::load_manifest(dir.path() / "gen_input.yaml", op);
    ASSERT_TRUE(manifest.ok()) << manifest.error().message;
    auto cases = bb::expand_cases(*manifest);
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    // Its backward too, where it declares one: each case's backward call (backward_case.hpp), of
    // the cases that run on the CPU too (a GPU-sized case's backward in double on the CPU takes
    // minutes: linear_gelu's 2048x2048x1024, three products).
    std::vector<bb::ConcreteCase> all = *cases;
    if (manifest->backward)
      for (const auto& c : *cases) {
        if (!c.runs_on("cpu")) continue;
        auto b = bb::backward_case(c, *manifest);
        ASSERT_TRUE(b.ok()) << b.error().message;
        all.push_back(*b);
      }
    for (const auto& c : all) {
      if (!c.runs_on("cuda")) continue;
      bb::TestRequest req = bb::case_request(op, c, dir.path());
      const auto pass = c.mode == bb::Mode::bwd ? bb::Target::Pass::backward : bb::Target::Pass::forward;
      req.impl = {bb::Target::Kind::reference, library.string(), pass};
      req.reference = {bb::Target::Kind::reference, library.string(), pass};
      req.device = "cuda";
      req.reference_device = "cpu";
      const bb::TestResult r = bb::run_test_in_process(req);
      if (r.outcome.verdict == bb::Verdict::skipped) GTEST_SKIP() << "no CUDA device: " << r.outcome.message;
      EXPECT_EQ(r.outcome.verdict, bb::Verdict::pass) << op << " " << c.id << ": " << r.outcome.message;
      ++compared;
    }
  }
  if (ops_with_cuda == 0) GTEST_SKIP() << "built without CUDA: the shipped references run on the CPU only";
  EXPECT_EQ(ops_with_cuda, 9);
  EXPECT_GT(compared, 200);
}
