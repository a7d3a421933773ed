// GPU tests, end to end. Where no CUDA device exists they are skipped with the reason the
// run reported; on the GPU machine they run for real.
#include <chrono>
#include <fstream>
#include <thread>

#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "e2e_util.hpp"
#include "shell_util.hpp"

using e2e::backendbench;

namespace {

// CUDA's availability as the run reported it; "" when available.
std::string cuda_unavailable(const nlohmann::json& r) {
  for (const auto& d : r.value("devices", nlohmann::json::array()))
    if (d.value("name", "") == "cuda") return d.value("available", false) ? "" : d.value("reason", "unavailable");
  return "the run asked nothing about CUDA";
}

std::string verdict_of(const nlohmann::json& r, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(r, impl))
    if (t["case"] == c) return t["verdict"];
  return "(none)";
}
std::string message_of(const nlohmann::json& r, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(r, impl))
    if (t["case"] == c) return t["message"];
  return "(none)";
}

}  // namespace

TEST(Gpu, HostileCudaFixturesGetTheirVerdictsAndTheSweepCompletes) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu"), "--log-dir", logs.string(), "--test-timeout", "8",
                           "--timeout", "0.2", "--min-time", "0.01"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) {
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;  // everything SKIPPED, with the reason
    for (const auto& t : r["tests"]) EXPECT_EQ(t["verdict"], "SKIPPED") << t.dump();
    GTEST_SKIP() << "no CUDA device: " << why;
  }
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string c = "correctness/small[n=1000]";
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_good", c), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_good", "performance/big"), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_illegal", c), "CRASH");
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_illegal"))
    EXPECT_NE(t["message"].get<std::string>().find("sticky device error"), std::string::npos) << t.dump();
  // A fault in a CUDA plugin's host code: the report names its file and line, from a worker that
  // holds a CUDA context (the runtime's own signal handlers do not hide it).
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_hostsegv")) {
    EXPECT_EQ(t["verdict"], "CRASH") << t.dump();
    ASSERT_TRUE(t.contains("crash")) << t.dump();
    EXPECT_EQ(t["crash"]["signal"], "SIGSEGV") << t.dump();
    ASSERT_FALSE(t["crash"]["frames"].empty()) << t.dump();
    EXPECT_EQ(std::filesystem::path(t["crash"]["frames"][0].value("file", "")).filename(), "scale_cuda_hostsegv.cu") << t.dump();
    EXPECT_EQ(t["crash"]["frames"][0].value("line", 0), 6) << t.dump();
  }
  // Each crash is its test's alone: the next tests ran in fresh workers with fresh contexts.
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_overflow", c), "OUT_OF_BOUNDS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_unwritten", c), "UNWRITTEN");
  // Work outside the given stream is seen while that stream is held, and never timed; launched
  // late too (the call run again is witnessed under the whole hold).
  for (const char* impl : {"scale__scale_cuda_sidestream", "scale__scale_cuda_defaultstream", "scale__scale_cuda_latelaunch"})
    for (const auto& t : e2e::tests_of(r, impl)) {
      EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
      EXPECT_NE(t["message"].get<std::string>().find("ran outside the stream it was given"), std::string::npos) << t.dump();
      EXPECT_FALSE(t.contains("timing")) << t.dump();
    }
  // A kernel that never ends: TIMEOUT, each case in a fresh worker.
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_spin")) EXPECT_EQ(t["verdict"], "TIMEOUT") << t.dump();
  // A device-side assert: a sticky error, CRASH.
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_assert")) {
    EXPECT_EQ(t["verdict"], "CRASH") << t.dump();
    EXPECT_NE(t["message"].get<std::string>().find("assert"), std::string::npos) << t.dump();
  }
  // Device memory hoarded: the hoarding call passes; what needs memory after it in that worker
  // fails with out-of-memory ERROR, unless another process (a worker retiring, the checker) gave
  // memory back meanwhile, which the hoarder did not take (then it computes right: PASS); the
  // next implementation (illegal, in a fresh worker) has the device back.
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_hoard", "correctness/small[n=16]"), "PASS");
  const std::string hoarded = verdict_of(r, "scale__scale_cuda_hoard", c);
  EXPECT_TRUE(hoarded == "PASS" || hoarded == "ERROR") << hoarded;
  if (hoarded == "ERROR")
    EXPECT_NE(message_of(r, "scale__scale_cuda_hoard", c).find("out of memory"), std::string::npos) << message_of(r, "scale__scale_cuda_hoard", c);
  // Attacks on the grader (docs/RELIABILITY.md): a reply forged inside the worker is not
  // believed (the host judges the buffers), the reference is not readable from the worker.
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_reply")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_borrow")) EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
  // The device timer forged through the runtime plugin's GOT: where the worker's code and RELRO
  // are sealed (mseal), the slot cannot be made writable and the fixture computes honestly (PASS,
  // no forged speedup); elsewhere the worker's own check finds the rewritten slot.
  if (r["host"]["sandbox"].value("code_sealed", false)) {
    EXPECT_EQ(verdict_of(r, "scale__scale_cuda_clock", "performance/big"), "PASS") << message_of(r, "scale__scale_cuda_clock", "performance/big");
    for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_clock"))
      if (t.contains("speedup")) EXPECT_LT(t["speedup"].get<double>(), 3.0) << t.dump();
  } else {
    EXPECT_EQ(verdict_of(r, "scale__scale_cuda_clock", "performance/big"), "IMPLAUSIBLE");
    EXPECT_NE(message_of(r, "scale__scale_cuda_clock", "performance/big").find("the GOT slot of cudaEvent"), std::string::npos)
        << message_of(r, "scale__scale_cuda_clock", "performance/big");
  }
  // An escaped daemon that would rewrite the results once the host is gone: killed with its
  // worker's cgroup; the log directory is not visible from the worker anyway.
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_escape")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (const auto& t : e2e::tests_of(e2e::read_json(logs / "results.json"), "scale__scale_cuda_escape"))
    EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  for (const auto& line : e2e::read_jsonl(logs / "results.jsonl"))
    if (line.value("impl", "") == "scale__scale_cuda_escape") EXPECT_EQ(line["verdict"], "UNWRITTEN") << line.dump();
  // Right until its timing loop: caught after the first timed block (on the host here: a small
  // case's buffers come home; Gpu.ATimedBlock... has the device's check).
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", c), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", "performance/big"), "FAIL");
  EXPECT_NE(message_of(r, "scale__scale_cuda_tired", "performance/big").find("wrong while timed"), std::string::npos);
  // A result cache on the device keyed by sampled inputs: a checked call on sparsely changed
  // inputs finds it out (compared on the host here: a small case).
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_samplecache", c), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_samplecache", "performance/big"), "FAIL");
  EXPECT_NE(message_of(r, "scale__scale_cuda_samplecache", "performance/big").find("a call on the case's inputs with a few elements changed"),
            std::string::npos)
      << message_of(r, "scale__scale_cuda_samplecache", "performance/big");
  // Persisting L2 over its inputs: right, so PASS (its time: Gpu.PersistingL2DoesNotOutliveTheFlush).
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_persist")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  EXPECT_EQ(r["tests"].size(), 20u * 3u);
  for (const auto& t : r["tests"]) EXPECT_EQ(t["device"], "cuda") << t.dump();
}

// Class 6 on the GPU (docs/RELIABILITY.md): scale_cuda_hijack.so exports a CUDA implementation
// and a 50-times-too-slow scale_reference, and sorts before the (CPU) scale_reference.so. As the
// op's reference it would be the default CUDA baseline, and every CUDA implementation would read
// about 50x. Two libraries exporting the reference are an error naming both (no device needed to
// see it); with the manifest naming the trusted reference, the hijacker is an implementation like
// any other, timed against the manifest's CUDA baseline: about 1x.
TEST(Gpu, ACudaLibraryExportingTheReferenceTooCannotBecomeTheBaseline) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu_ref_attacks"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  auto two = backendbench({"--custom-ops-root", e2e::fixture_root("gpu_ref_attacks"), "--no-log", "--correctness-only"});
  EXPECT_EQ(two.exit_code, 2) << two.out << two.err;
  EXPECT_NE(two.err.find("2 libraries export scale_reference: scale_cuda_hijack.so, scale_reference.so"), std::string::npos) << two.err;

  const auto root = e2e::temp_dir("root");
  std::filesystem::copy(e2e::fixture_root("gpu_ref_attacks"), root, std::filesystem::copy_options::recursive);
  std::ofstream(root / "scale" / "gen_input.yaml", std::ios::app)
      << "reference: scale_reference\nbaseline: {cpu: reference, cuda: scale_cuda_good}\n";
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--timeout", "0.2", "--min-time", "0.01"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(r["ops"][0]["reference"], "scale_reference");
  for (const char* impl : {"scale__scale_cuda_good", "scale__scale_cuda_hijack"}) {
    const auto tests = e2e::tests_of(r, impl);
    EXPECT_EQ(tests.size(), 3u) << impl;
    for (const auto& t : tests) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  }
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_hijack"))
    if (t["case"] == "performance/big") {
      ASSERT_TRUE(t.contains("speedup")) << t.dump();
      EXPECT_LT(t["speedup"].get<double>(), 2.0) << "its own slow reference must not be its baseline: " << t.dump();
    }
}

// Every test of the four shipped CUDA implementations passes; the rmsnorm ones are also timed (the
// myop ones are, against themselves, in Paired.AnImplementationAgainstItselfReadsOneOnEveryCudaCase:
// their 64M-element cases take a minute each to time while buffers go through the host).
TEST(Gpu, ShippedOpsPassOnCudaInEveryDtype) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--log-dir", logs.string(), "--impls",
                           "myop_cuda_naive,myop_cuda_vec,rmsnorm_cuda_block,rmsnorm_cuda_warp", "--correctness-only"});
  auto r = e2e::read_json(logs / "results.json");
  if (r["tests"].empty()) GTEST_SKIP() << "built without CUDA: no CUDA implementations";
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const auto& t : r["tests"]) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    EXPECT_EQ(t["device"], "cuda");
  }
  EXPECT_EQ(r["tests"].size(), 2u * 31 + 2u * 36);

  const auto timed_logs = e2e::temp_dir("timed");
  auto timed_run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--log-dir", timed_logs.string(), "--impls",
                                 "rmsnorm_cuda_block,rmsnorm_cuda_warp", "--timeout", "0.2", "--min-time", "0.01"});
  EXPECT_EQ(timed_run.exit_code, 0) << timed_run.out << timed_run.err;
  auto tr = e2e::read_json(timed_logs / "results.json");
  int timed = 0;
  for (const auto& t : tr["tests"]) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    if (t.contains("timing")) {
      ++timed;
      EXPECT_GT(t["gbps"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(tr["tests"].size(), 2u * 36);
  EXPECT_EQ(timed, 2 * 5);
  for (const auto& d : tr["devices"])
    if (d["name"] == "cuda") EXPECT_GT(d["devices"][0]["peak_bandwidth_gbps"].get<double>(), 1000.0) << d.dump();
}

TEST(Gpu, AGpuImplementationServesAsTheReferenceAcrossDevices) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu_impl_ref"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu_impl_ref"), "--log-dir", logs.string(), "--correctness-only"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(r["ops"][0]["reference"], "scale__scale_cuda_good");
  EXPECT_EQ(r["ops"][0]["reference_kind"], "implementation");
  // The CPU implementation is checked against the reference computed on the GPU...
  for (const auto& t : e2e::tests_of(r, "scale__scale_zcpu")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    EXPECT_EQ(t["device"], "cpu");
  }
  // ...and so is a CUDA one, whose unwritten half is caught.
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_unwritten")) EXPECT_EQ(t["verdict"], "UNWRITTEN") << t.dump();
  EXPECT_EQ(r["tests"].size(), 2u * 3u);
}

// A Triton kernel compiled ahead of time into a plugin (custom_ops/vector_add/vector_add_triton.*,
// cmake/BackendBenchTriton.cmake): checked and timed like any CUDA implementation.
TEST(Gpu, TritonAotPluginPassesVectorAddInEveryDtype) {
  if (std::string(BB_TRITON_MISSING) != "") GTEST_SKIP() << "no Triton plugin built: " << BB_TRITON_MISSING;
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--log-dir", logs.string(), "--ops", "vector_add", "--impls",
                           "vector_add_triton", "--timeout", "0.2", "--min-time", "0.01"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  // 12 correctness cases (three dtypes, four sizes, one of a single element), 4 timed ones.
  ASSERT_EQ(r["tests"].size(), 16u) << run.out;
  int timed = 0;
  for (const auto& t : r["tests"]) {
    EXPECT_EQ(t["impl"], "vector_add__vector_add_triton");
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    EXPECT_EQ(t["device"], "cuda");
    if (t.contains("timing")) {
      ++timed;
      EXPECT_GT(t["gbps"].get<double>(), 100.0) << t.dump();
    }
  }
  EXPECT_EQ(timed, 4);
}

// Persisting L2 (issue 39): an implementation that sets the persisting set-aside and an
// access-policy window over its input on the stream it is given would keep x in L2 through the
// flush and read it from there in every timed call. On a case of 16 MiB (inside H100's 37.5 MiB
// set-aside, far beyond nothing persisting) it is timed as the honest one is: its speedup against
// scale_cuda_good, the baseline, stays near 1.
TEST(Gpu, PersistingL2DoesNotOutliveTheFlush) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto root = e2e::temp_dir("persist_root");
  std::filesystem::create_directories(root / "scale");
  {
    std::ifstream in(std::filesystem::path(e2e::fixture_root("gpu")) / "scale" / "gen_input.yaml");
    std::ofstream out(root / "scale" / "gen_input.yaml");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("tests:", 0) == 0) break;
      out << line << "\n";
    }
    out << "baseline: {cpu: reference, cuda: scale_cuda_good}\n"
           "tests:\n  correctness:\n    - name: small\n      inputs: {x: {shape: [1000]}}\n"
           "  performance:\n    - name: l2\n      inputs: {x: {shape: [4194304]}}\n";
  }
  for (const char* so : {"scale_reference.so", "scale_cuda_good.so", "scale_cuda_persist.so"})
    std::filesystem::copy_file(std::filesystem::path(e2e::fixture_root("gpu")) / "scale" / so, root / "scale" / so);
  const auto logs = e2e::temp_dir("persist_logs");
  auto run = backendbench({"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--test-timeout", "30"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string perf = "performance/l2";
  ASSERT_EQ(verdict_of(r, "scale__scale_cuda_persist", perf), "PASS") << run.out << run.err;
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_persist")) {
    if (t["case"] != perf) continue;
    ASSERT_TRUE(t.contains("speedup")) << t.dump();
    EXPECT_LT(t["speedup"].get<double>(), 1.2) << "x kept in L2 through the flush: " << t.dump();
  }
}

// A timed block checked on the device (device_check.hpp: forced for this small case): an
// implementation right for a few calls, then wrong in its timing loop, is FAIL "wrong while
// timed" with the host's own message from the buffers the checker's "no" brought home; a right
// one passes; and the checker did the checking (the trace of the run's requests says so).
TEST(Gpu, ATimedBlockIsCheckedOnTheDeviceAndAWrongOneExplainedFromItsBuffers) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto logs = e2e::temp_dir("logs");
  const auto trace = e2e::temp_dir("trace") / "requests.jsonl";
  setenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES", "0", 1);
  setenv("BACKENDBENCH_TRACE_BLOCKS", trace.c_str(), 1);
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu"), "--log-dir", logs.string(), "--impls",
                           "scale_cuda_tired,scale_cuda_good,scale_cuda_samplecache", "--test-timeout", "20", "--timeout", "0.2", "--min-time",
                           "0.01"});
  unsetenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES");
  unsetenv("BACKENDBENCH_TRACE_BLOCKS");
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", "correctness/small[n=1000]"), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", "performance/big"), "FAIL") << run.out << run.err;
  const std::string m = message_of(r, "scale__scale_cuda_tired", "performance/big");
  EXPECT_NE(m.find("wrong while timed: after the last timed call of block 1: output 'y'"), std::string::npos) << m;
  EXPECT_NE(m.find("left unwritten"), std::string::npos) << m;
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_good", "performance/big"), "PASS") << run.out << run.err;
  // Its passing tests say how close they came, from the device (runtime v8's error_figures).
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_good")) {
    ASSERT_TRUE(t.contains("errors")) << t.dump();
    EXPECT_EQ(t["errors"]["output"], "y") << t.dump();
    EXPECT_LE(t["errors"]["tolerance_used"].get<double>(), 1.0) << t.dump();
  }
  // The checked calls are compared on the device too: a cache keyed by sampled inputs returns
  // its kept result on sparsely changed inputs, the checker says no, its buffers come home.
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_samplecache", "performance/big"), "FAIL");
  EXPECT_NE(message_of(r, "scale__scale_cuda_samplecache", "performance/big").find("a call on the case's inputs with a few elements changed"),
            std::string::npos)
      << message_of(r, "scale__scale_cuda_samplecache", "performance/big");
  int verified = 0, watched = 0, expected = 0, checked_home = 0;
  std::ifstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    // A checked call's buffers come home only for the cache's wrong one ("buffers" after it).
    if (j.value("side", "") == "impl" && j.value("cmd", "") == "buffers") ++checked_home;
    if (j.value("side", "") != "checker") continue;
    verified += j.value("cmd", "") == "verify";
    watched += j.value("cmd", "") == "watch_mirror";
    expected += j.value("cmd", "") == "expect";
  }
  EXPECT_GE(watched, 6);    // two mirrors (x, y) for each implementation's timed test
  EXPECT_GE(verified, 9);   // the good one's blocks (8 pairs at least) and the tired one's first
  EXPECT_GE(expected, 8);   // the good one's 4 checked calls: their buffers, then the case's again
  EXPECT_LE(checked_home, 2);  // the tired one's wrong block, the cache's wrong checked call
}

// Where the reference computes on the CUDA device, a timed test's checked calls never leave it:
// the reference's worker makes the call's inputs there from the host's secret (the host's values,
// init_values.h), the checker stages them into the implementation's buffers and compares its
// call with the reference's. A right implementation passes, the sampled-input cache is FAIL on
// the sparsely changed inputs, explained by the host from the values it then makes itself.
TEST(Gpu, CheckedCallsAreMadeOnTheDeviceWhereTheReferenceRunsThere) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu_device_ref"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto logs = e2e::temp_dir("logs");
  const auto trace = e2e::temp_dir("trace") / "requests.jsonl";
  setenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES", "0", 1);
  setenv("BACKENDBENCH_TRACE_BLOCKS", trace.c_str(), 1);
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu_device_ref"), "--log-dir", logs.string(), "--impls",
                           "scale_cuda_good,scale_cuda_samplecache", "--test-timeout", "20", "--timeout", "0.2", "--min-time", "0.01"});
  unsetenv("BACKENDBENCH_DEVICE_CHECK_MIN_BYTES");
  unsetenv("BACKENDBENCH_TRACE_BLOCKS");
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (const auto& t : e2e::tests_of(r, "scale__scale_cuda_good")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_samplecache", "performance/big"), "FAIL") << run.out << run.err;
  const std::string m = message_of(r, "scale__scale_cuda_samplecache", "performance/big");
  EXPECT_NE(m.find("wrong while timed: a call on the case's inputs with a few elements changed"), std::string::npos) << m;
  int staged = 0, made = 0, good_staged_impl = 0, good_home = 0;
  std::ifstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    const bool good = j.value("impl", "").find("scale_cuda_good") != std::string::npos;
    // A checked call's inputs staged, or a timed sample kept on fresh inputs compared: each after
    // the reference's worker made the inputs.
    if (j.value("side", "") == "checker" && (j.value("cmd", "") == "stage" || j.value("cmd", "") == "verify_kept")) ++staged;
    if (j.value("side", "") == "reference" && j.value("cmd", "") == "call" && j["worker_steps"].contains("generate_s")) ++made;
    if (good && j.value("side", "") == "impl" && j.value("cmd", "") == "call" && j["worker_steps"].contains("poison_s")) ++good_staged_impl;
    if (good && j.value("side", "") == "impl" && j.value("cmd", "") == "buffers") ++good_home;
  }
  EXPECT_GE(good_staged_impl, 4);  // the right one's 4 checked calls, all on the device
  EXPECT_GE(staged, 5);            // and the cache's, up to its wrong one
  EXPECT_EQ(made, staged);         // each made by the reference's worker first
  EXPECT_EQ(good_home, 0);         // nothing of the right one came home
}

// The device's measured peaks are taken once and kept by the host across runs (the probe, behind
// its walls, cannot write the cache); a cache entry raised beyond the theoretical bandwidth is
// measured again, never believed.
TEST(Gpu, TheDevicePeaksAreMeasuredOnceAcrossRunsAndAPoisonedEntryAgain) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto cache = e2e::temp_dir("peaks");
  ::setenv("BACKENDBENCH_CACHE_DIR", cache.c_str(), 1);
  auto timed_run = [&](const std::string& name) {
    const auto logs = e2e::temp_dir(name);
    auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu"), "--log-dir", logs.string(), "--impls", "scale_cuda_good", "--timeout",
                             "0.2", "--min-time", "0.01"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return e2e::read_json(logs / "results.json");
  };
  auto measured = [](const nlohmann::json& r) {
    for (const auto& d : r["devices"])
      if (d["name"] == "cuda") return d["devices"][0];
    return nlohmann::json::object();
  };
  const auto first = timed_run("first");
  if (auto why = cuda_unavailable(first); !why.empty()) {
    ::unsetenv("BACKENDBENCH_CACHE_DIR");
    GTEST_SKIP() << "no CUDA device: " << why;
  }
  const auto m1 = measured(first);
  EXPECT_FALSE(m1["measured_bandwidth"]["cached"].get<bool>()) << m1.dump();
  ASSERT_TRUE(std::filesystem::exists(cache / "device_peaks.json"));
  const auto m2 = measured(timed_run("second"));
  EXPECT_TRUE(m2["measured_bandwidth"]["cached"].get<bool>()) << m2.dump();
  EXPECT_DOUBLE_EQ(m2["measured_bandwidth"]["copy_gbps"].get<double>(), m1["measured_bandwidth"]["copy_gbps"].get<double>());

  // Poisoned: every entry ten times faster than it is.
  auto peaks = e2e::read_json(cache / "device_peaks.json");
  for (auto& [key, entry] : peaks.items()) entry["copy_gbps"] = entry["copy_gbps"].get<double>() * 10;
  std::ofstream(cache / "device_peaks.json") << peaks.dump();
  const auto m3 = measured(timed_run("third"));
  ::unsetenv("BACKENDBENCH_CACHE_DIR");
  EXPECT_FALSE(m3["measured_bandwidth"]["cached"].get<bool>()) << m3.dump();
  EXPECT_LE(m3["measured_bandwidth"]["copy_gbps"].get<double>(), 1.05 * m3["peak_bandwidth_gbps"].get<double>()) << m3.dump();
}

// The first implementations' workers start with the plan, beside the device probe (worker_stock.hpp):
// every CUDA implementation's worker of a run of two was started ahead. Not where the probe
// measures the device's peaks (an empty cache): nothing starts beside a measurement.
TEST(Gpu, TheFirstImplementationsWorkersStartWithThePlanUnlessThePeaksAreMeasured) {
  auto cuda_slot = [](const nlohmann::json& r) {
    for (const auto& w : r.value("workers", nlohmann::json::array()))
      if (w.value("name", "").rfind("cuda:0", 0) == 0) return w;
    return nlohmann::json::object();
  };
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--log-dir", logs.string(), "--ops", "myop", "--impls",
                           "myop_cuda_naive,myop_cuda_vec", "--correctness-only"});
  const auto r = e2e::read_json(logs / "results.json");
  if (r["tests"].empty()) GTEST_SKIP() << "built without CUDA: no CUDA implementations";
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto slot = cuda_slot(r);
  EXPECT_EQ(slot.value("worker_starts", -1), 2) << r["workers"].dump();
  EXPECT_EQ(slot.value("started_ahead", -1), 2) << r["workers"].dump();

  const auto cache = e2e::temp_dir("peaks");
  ::setenv("BACKENDBENCH_CACHE_DIR", cache.c_str(), 1);
  const auto timed_logs = e2e::temp_dir("timed");
  auto timed = backendbench({"--custom-ops-root", BB_SHIPPED_ROOT, "--log-dir", timed_logs.string(), "--ops", "myop", "--impls",
                             "myop_cuda_naive,myop_cuda_vec", "--timeout", "0.2", "--min-time", "0.01"});
  ::unsetenv("BACKENDBENCH_CACHE_DIR");
  EXPECT_EQ(timed.exit_code, 0) << timed.out << timed.err;
  const auto tr = e2e::read_json(timed_logs / "results.json");
  for (const auto& d : tr["devices"])
    if (d["name"] == "cuda") EXPECT_FALSE(d["devices"][0]["measured_bandwidth"].value("cached", true)) << d.dump();
  const auto timed_slot = cuda_slot(tr);
  EXPECT_EQ(timed_slot.value("worker_starts", -1), 2) << tr["workers"].dump();
  EXPECT_EQ(timed_slot.value("started_ahead", -1), 1) << tr["workers"].dump();
}

// Python work off the given stream (python_witness.cpp): on a torch.cuda.Stream() of its own, a
// Triton launch under one, an ExternalStream made through the driver: ERROR, never timed. Three
// honest shapes beside them PASS: on the given stream; a copy of an intermediate, whose block
// already held this call's bytes when the call began (the second call of --check-determinism); a
// side stream joined both ways.
TEST(Gpu, PythonWorkOffTheGivenStreamIsAnError) {
  const auto logs = e2e::temp_dir("gpu_python_logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu_python"), "--log-dir", logs.string(), "--test-timeout", "30",
                           "--check-determinism"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (const auto& t : e2e::tests_of(r, "scale__scale_py_good"))
    if (t.value("message", "").find("No module named") != std::string::npos) GTEST_SKIP() << t["message"];
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  for (const char* impl : {"scale__scale_py_good", "scale__scale_py_clone", "scale__scale_py_forkjoin"}) {
    EXPECT_EQ(e2e::tests_of(r, impl).size(), 3u) << impl;
    for (const auto& t : e2e::tests_of(r, impl)) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  }
  for (const char* impl : {"scale__scale_py_stream", "scale__scale_py_triton_stream", "scale__scale_py_external"}) {
    EXPECT_EQ(e2e::tests_of(r, impl).size(), 3u) << impl;
    for (const auto& t : e2e::tests_of(r, impl)) {
      EXPECT_EQ(t["verdict"], "ERROR") << t.dump();
      EXPECT_NE(t.value("message", "").find("ran outside the stream it was given"), std::string::npos) << t.dump();
      EXPECT_FALSE(t.contains("timing")) << t.dump();
    }
  }
}

// Fresh inputs for every timed sample of a device case (issue 39 item 1; docs/RELIABILITY.md),
// attack first: a device-side cache keyed by a hash of every input element (a hash kernel, then a
// copy of the kept result, all on the given stream) scores 62-63x on `poly`'s heavy case where a
// block's timed calls repeat one input (BACKENDBENCH_SANDBOX_OFF=fresh). With each sample's
// inputs made on the device from a seed the host sends with its go, it never hits: it computes
// and hashes besides, and reads as the honest kernel does. A sample kept in secret by the checker
// is compared with the reference's for its seed on every block: nothing of the right one comes
// home.
TEST(Gpu, DeviceContentCachesGainNothingWhereEveryTimedSampleHasFreshInputs) {
  if (!std::filesystem::exists(e2e::fixture_root("content_cache"))) GTEST_SKIP() << "no content cache fixtures";
  const auto logs = e2e::temp_dir("logs");
  const auto trace = e2e::temp_dir("trace") / "requests.jsonl";
  setenv("BACKENDBENCH_TRACE_BLOCKS", trace.c_str(), 1);
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("content_cache"), "--impls", "poly_cuda_good,poly_cuda_hashcache", "--cases",
                           "performance/*", "--log-dir", logs.string(), "--test-timeout", "60"});
  unsetenv("BACKENDBENCH_TRACE_BLOCKS");
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  ASSERT_FALSE(e2e::tests_of(r, "poly__poly_cuda_hashcache").empty()) << "built without CUDA: " << run.out;
  for (const char* impl : {"poly__poly_cuda_good", "poly__poly_cuda_hashcache"})
    for (const auto& t : e2e::tests_of(r, impl)) {
      EXPECT_EQ(t["verdict"], "PASS") << t.dump();
      EXPECT_EQ(t["timing"].value("fresh_inputs", ""), "device") << t.dump();
    }
  std::map<std::string, double> speedup;
  for (const auto& t : e2e::tests_of(r, "poly__poly_cuda_hashcache"))
    if (t["case"] == "performance/heavy" && !t["speedup"].is_null()) speedup["heavy"] = t["speedup"].get<double>();
  ASSERT_TRUE(speedup.count("heavy")) << run.out;
  EXPECT_LT(speedup["heavy"], 1.5) << "62-63x where a block's calls repeat one input";
  EXPECT_GT(r["phases"]["tests"].value("fresh_inputs_s", 0.0), 0.0) << r["phases"].dump();
  int kept = 0, kept_home = 0, impl_home = 0;
  std::ifstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.value("side", "") == "checker" && j.value("cmd", "") == "kept_home") ++kept_home;
    if (j.value("side", "") == "impl" && j.value("cmd", "") == "buffers") ++impl_home;
    if (j.value("cmd", "") == "fresh_compare") ++kept;
  }
  EXPECT_GE(kept, 4) << "a kept sample judged after every block of both implementations";
  EXPECT_EQ(kept_home, 0) << "nothing of a right sample comes home";
  EXPECT_EQ(impl_home, 0);

  // The attack, where each block's timed calls repeat the case's inputs: the cache wins.
  const auto off_logs = e2e::temp_dir("fresh_off");
  const auto off = e2e::shell(fmt::format("BACKENDBENCH_SANDBOX_OFF=fresh {} --custom-ops-root {} --impls poly_cuda_good,poly_cuda_hashcache "
                                          "--cases performance/heavy --test-timeout 60 --log-dir {}",
                                          e2e::sh_quote(BB_BINARY), e2e::sh_quote(e2e::fixture_root("content_cache")), e2e::sh_quote(off_logs.string())));
  const auto o = e2e::read_json(off_logs / "results.json");
  for (const auto& t : e2e::tests_of(o, "poly__poly_cuda_hashcache")) {
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    if (!t["speedup"].is_null()) EXPECT_GT(t["speedup"].get<double>(), 5.0) << t.dump();
  }
}

// A timed sample on fresh inputs made on the device that is wrong (scale_cuda_tired leaves an
// element unwritten from its 9th call in a row on): the checker keeps a sample of every block in
// secret; its "no" brings that sample's buffers home, and the reference's buffers for its seed
// (inputs and outputs, as the reference's worker made them there), and the host explains it.
TEST(Gpu, AWrongSampleKeptOnTheDeviceIsExplainedByTheHost) {
  if (!std::filesystem::exists(e2e::fixture_root("gpu_device_ref"))) GTEST_SKIP() << "built without CUDA: no GPU fixtures";
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("gpu_device_ref"), "--log-dir", logs.string(), "--impls", "scale_cuda_tired",
                           "--test-timeout", "20", "--timeout", "0.2", "--min-time", "0.01"});
  auto r = e2e::read_json(logs / "results.json");
  if (auto why = cuda_unavailable(r); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", "correctness/small[n=1000]"), "PASS");
  EXPECT_EQ(verdict_of(r, "scale__scale_cuda_tired", "performance/big"), "FAIL") << run.out << run.err;
  const std::string m = message_of(r, "scale__scale_cuda_tired", "performance/big");
  EXPECT_NE(m.find("of block 1, on fresh inputs: output 'y'"), std::string::npos) << m;
  EXPECT_NE(m.find("left unwritten"), std::string::npos) << m;
}
