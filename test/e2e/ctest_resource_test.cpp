// CTest integration: cmake/BackendBenchTests.cmake registers one ctest test per op x
// implementation; `ctest -j --resource-spec-file` gives each GPU test a GPU of its own; GPU
// implementations are Skipped, not Failed, without a GPU; `backendbench resource-spec` writes
// the spec.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"
#include "shell_util.hpp"

namespace fs = std::filesystem;
using e2e::sh_quote;

namespace {

// Configures the fixture project (test/fixtures/ctest_project) for `root` into `build`.
e2e::ShellRun configure(const fs::path& build, const fs::path& root, const fs::path& record) {
  const fs::path source = fs::path(BB_SOURCE_DIR) / "test" / "fixtures" / "ctest_project";
  const fs::path module = fs::path(BB_SOURCE_DIR) / "cmake" / "BackendBenchTests.cmake";
  return e2e::shell(fmt::format("{} -S {} -B {} -DBACKENDBENCH_TESTS_MODULE={} -DBB_BINARY={} -DBB_ROOT={} -DBB_RECORD_DIR={}",
                                sh_quote(BB_CMAKE), sh_quote(source.string()), sh_quote(build.string()), sh_quote(module.string()),
                                sh_quote(BB_BINARY), sh_quote(root.string()), sh_quote(record.string())),
                    120);
}

// `env`: assignments put before the command ("NAME=value ...").
e2e::ShellRun ctest(const fs::path& build, const std::string& args, int timeout_s = 200, const std::string& env = "") {
  return e2e::shell(fmt::format("{}{}{} --test-dir {} {}", env, env.empty() ? "" : " ", sh_quote(BB_CTEST), sh_quote(build.string()), args),
                    timeout_s);
}

// ctest's result word for `test` in its output ("Passed", "Skipped", "Failed", ...), or "".
std::string outcome(const std::string& output, const std::string& test) {
  // "1/3 Test #2: fx.scale__scale_good .............   Passed    0.41 sec"
  const std::regex line("Test +#[0-9]+: " + std::regex_replace(test, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                        R"( \.*[ *]*([A-Za-z]+))");
  std::smatch m;
  return std::regex_search(output, m, line) ? m[1].str() : "";
}

// The launcher's note for one implementation: CTEST_RESOURCE_GROUP_COUNT and _0_GPUS.
std::map<std::string, std::string> note_of(const fs::path& record, const std::string& impl) {
  std::map<std::string, std::string> note;
  std::ifstream in(record / (impl + ".env"));
  for (std::string l; std::getline(in, l);)
    if (auto eq = l.find('='); eq != std::string::npos) note[l.substr(0, eq)] = l.substr(eq + 1);
  return note;
}

}  // namespace

// Two GPUs in a hand-written spec, ctest -j2: each GPU test (cuda, hip) was handed one GPU
// (CTEST_RESOURCE_GROUP_0_GPUS) and is Skipped on this machine without one (exit 77); the CPU
// test passes; the reference is no test; ctest as a whole passes.
TEST(CtestResource, GpuTestsGetAGpuEachAndAreSkippedWithoutOne) {
  const fs::path work = e2e::temp_dir("ctest");
  const fs::path record = work / "record";
  fs::create_directories(record);
  const auto conf = configure(work / "build", e2e::fixture_root("ctest"), record);
  ASSERT_EQ(conf.exit_code, 0) << conf.output;

  const auto listed = ctest(work / "build", "-N");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("Total Tests: 3"), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("scale_reference"), std::string::npos) << "the reference is no test:\n" << listed.output;

  {
    std::ofstream spec(work / "spec.json");
    spec << R"({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": 1}, {"id": "1", "slots": 1}]}]})";
  }
  // "Without one" holds on a GPU machine too: its devices are hidden from this ctest (the fake
  // plugins are CPU code that declares a GPU, and would crash on a real one).
  const auto run = ctest(work / "build", fmt::format("-j2 --resource-spec-file {} --output-on-failure", sh_quote((work / "spec.json").string())),
                         200, "CUDA_VISIBLE_DEVICES= HIP_VISIBLE_DEVICES= ROCR_VISIBLE_DEVICES=");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(outcome(run.output, "fx.scale__scale_good"), "Passed") << run.output;
  EXPECT_EQ(outcome(run.output, "fx.scale__scale_cuda_fake"), "Skipped") << run.output;
  EXPECT_EQ(outcome(run.output, "fx.scale__scale_hip_fake"), "Skipped") << run.output;

  for (const std::string impl : {"scale__scale_cuda_fake", "scale__scale_hip_fake"}) {
    const auto note = note_of(record, impl);
    EXPECT_EQ(note.count("count") ? note.at("count") : "", "1") << impl << " got no resource group";
    const std::string gpus = note.count("gpus") ? note.at("gpus") : "";
    EXPECT_TRUE(gpus == "id:0,slots:1" || gpus == "id:1,slots:1") << impl << " got gpus '" << gpus << "'";
  }
  const auto cpu_note = note_of(record, "scale__scale_good");
  ASSERT_TRUE(cpu_note.count("count")) << "the CPU test did not run through the launcher";
  EXPECT_TRUE(cpu_note.at("count") == "" || cpu_note.at("count") == "0") << "a CPU test holds no GPU: " << cpu_note.at("count");
  EXPECT_EQ(cpu_note.at("gpus"), "") << "a CPU test holds no GPU";

  // The labels: every test "fixture", the GPU ones "gpu" too.
  const auto gpu_only = ctest(work / "build", "-N -L gpu");
  EXPECT_NE(gpu_only.output.find("Total Tests: 2"), std::string::npos) << gpu_only.output;
}

// Implementations are found when ctest runs: a library dropped into the root is a new test at
// the next ctest, without configuring again.
TEST(CtestResource, DroppedInLibraryIsANewTestWithoutReconfiguring) {
  const fs::path work = e2e::temp_dir("dropin");
  fs::copy(e2e::fixture_root("ctest"), work / "root", fs::copy_options::recursive);
  const auto conf = configure(work / "build", work / "root", work);
  ASSERT_EQ(conf.exit_code, 0) << conf.output;
  EXPECT_NE(ctest(work / "build", "-N").output.find("Total Tests: 3"), std::string::npos);

  fs::copy_file(work / "root" / "scale" / "scale_good.so", work / "root" / "scale" / "scale_extra.so");
  const auto listed = ctest(work / "build", "-N");
  EXPECT_NE(listed.output.find("Total Tests: 4"), std::string::npos) << listed.output;
  const auto run = ctest(work / "build", "-R scale_extra");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(outcome(run.output, "fx.scale__scale_extra"), "Passed") << run.output;
}

// A root that does not exist is one failing test saying so, not a silent empty test list.
TEST(CtestResource, MissingRootIsAFailingTestThatSaysWhy) {
  const fs::path work = e2e::temp_dir("missing");
  const auto conf = configure(work / "build", work / "no_such_root", work);
  ASSERT_EQ(conf.exit_code, 0) << conf.output;
  const auto run = ctest(work / "build", "--output-on-failure");
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_EQ(outcome(run.output, "fx.ROOT"), "Failed") << run.output;
  EXPECT_NE(run.output.find("no_such_root does not exist"), std::string::npos) << run.output;
}

// backendbench resource-spec writes a CTest resource spec, version 1.0, with one gpus entry per
// GPU (none on a machine without one), to a file or to standard output.
TEST(ResourceSpec, WritesAValidSpec) {
  const fs::path work = e2e::temp_dir("spec");
  const auto r = e2e::backendbench({"resource-spec", "--output", (work / "spec.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto spec = e2e::read_json(work / "spec.json");
  EXPECT_EQ(spec["version"], (nlohmann::json{{"major", 1}, {"minor", 0}}));
  ASSERT_TRUE(spec["local"].is_array());
  ASSERT_EQ(spec["local"].size(), 1u);
  const auto& gpus = spec["local"][0]["gpus"];
  ASSERT_TRUE(gpus.is_array()) << spec.dump();
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_TRUE(gpus[i]["id"].is_string()) << gpus.dump();
    EXPECT_EQ(gpus[i]["slots"], 1) << gpus.dump();
  }
  // A build without a GPU runtime plugin can find no device.
  if (!fs::exists(fs::path(BB_BINARY).parent_path() / "plugins" / "backendbench_cuda.so") &&
      !fs::exists(fs::path(BB_BINARY).parent_path() / "plugins" / "backendbench_hip.so"))
    EXPECT_TRUE(gpus.empty()) << gpus.dump();

  const auto to_stdout = e2e::backendbench({"resource-spec", "--slots", "2"});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  const auto printed = nlohmann::json::parse(to_stdout.out);
  EXPECT_EQ(printed["local"][0]["gpus"].size(), gpus.size());
  for (const auto& g : printed["local"][0]["gpus"]) EXPECT_EQ(g["slots"], 2);

  const auto bad = e2e::backendbench({"resource-spec", "--kind", "opencl"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}
