// Selective build of the shipped ops (-DBACKENDBENCH_OPS), as ExecuTorch's selective build:
// configured for real; only the named ops get targets; an unknown name stops the configure
// with the list of what exists.
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace fs = std::filesystem;

namespace {
e2e::Run configure(const fs::path& dir, const std::string& ops) {
  return e2e::run_program({BB_CMAKE, "-S", BB_SOURCE_DIR, "-B", dir.string(), "-G", "Ninja", "-DBACKENDBENCH_OPS=" + ops,
                           "-DBACKENDBENCH_BUILD_TESTS=OFF", "-DBACKENDBENCH_CUDA=OFF", "-DBACKENDBENCH_HIP=OFF",
                           // where dlpack is a bare header (no package), as this build found it
                           std::string("-DDLPACK_INCLUDE_DIR=") + BB_DLPACK_INCLUDE_DIR},
                          300);
}
}  // namespace

TEST(Package, SelectiveBuildConfiguresOnlyTheNamedOps) {
  const auto dir = e2e::temp_dir("build");
  auto run = configure(dir, "myop;softmax");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("BackendBench: ops built: myop, softmax"), std::string::npos) << run.out;
  std::ifstream in(dir / "build.ninja");
  std::stringstream ninja;
  ninja << in.rdbuf();
  EXPECT_NE(ninja.str().find("custom_ops/myop/myop_cpp.so"), std::string::npos);
  EXPECT_NE(ninja.str().find("custom_ops/softmax/softmax_cpp.so"), std::string::npos);
  EXPECT_EQ(ninja.str().find("rmsnorm_cpp"), std::string::npos) << "rmsnorm was not selected";

  auto bad = configure(e2e::temp_dir("bad"), "myop;nosuch");
  EXPECT_NE(bad.exit_code, 0);
  // CMake folds long messages: the parts, each on one line.
  for (const char* part : {"no op 'nosuch' in", "expected some of:", "inplace_rmsnorm_, layernorm, linear_gelu, mul3,"})
    EXPECT_NE(bad.err.find(part), std::string::npos) << part << "\n" << bad.err;
}

// An out-of-tree project against the installed package, as a kernel engineer wraps third-party
// kernels: a C++ plugin with helpers of its own, and (where nvcc is found) a CUDA plugin that
// links cuBLAS through the CUDA toolkit's targets. Each library exports its entry points and
// nothing else; no build type means Release; a CUDA-only project hears nothing of HIP; a Debug
// plugin is warned about; the package carries dlpack.h.
TEST(Package, AnOutOfTreeCudaPluginLinkingCublasExportsOnlyItsEntryPoints) {
  const auto prefix = e2e::temp_dir("prefix"), project = e2e::temp_dir("project"), root = e2e::temp_dir("root");
  auto install = e2e::run_program({BB_CMAKE, "--install", BB_BUILD_DIR, "--prefix", prefix.string()}, 300);
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  EXPECT_TRUE(fs::exists(prefix / "include" / "backendbench" / "third_party" / "dlpack" / "dlpack.h"));
  // The nightly driver NIGHTLY.md's cron line names, beside the binary, which it runs.
  ASSERT_TRUE(fs::exists(prefix / "bin" / "backendbench-nightly"));
  auto nightly_help = e2e::run_program({(prefix / "bin" / "backendbench-nightly").string(), "--help"}, 30);
  EXPECT_NE(nightly_help.err.find("backendbench-nightly, the backendbench beside it"), std::string::npos) << nightly_help.err;

  std::ofstream(project / "CMakeLists.txt") << R"(cmake_minimum_required(VERSION 3.25)
project(gemmop LANGUAGES CXX)
find_package(BackendBench REQUIRED)
backendbench_add_plugin(gemmop_cpp OP gemmop SOURCES gemmop_cpp.cpp)
backendbench_enable_cuda()
if(BACKENDBENCH_HAVE_CUDA)
  backendbench_add_plugin(gemmop_cublas OP gemmop SOURCES gemmop_cublas.cu LINK CUDA::cublas)
endif()
)";
  std::ofstream(project / "gemmop_cpp.cpp") << R"(#include <backendbench/plugin.hpp>
int gemmop_helper(int x) { return 2 * x; }            // external linkage: hidden all the same
extern "C" int gemmop_c_helper(void) { return 3; }     // C linkage too
namespace { void run(bb::Call&) {} }
BB_KERNEL_IMPL(gemmop, run)
BB_PLUGIN_INFO("1.0", "cpu", "float32")
)";
  std::ofstream(project / "gemmop_cublas.cu") << R"(#include <backendbench/plugin.h>
#include <cublas_v2.h>
__global__ void gemmop_kernel(float* y) { y[threadIdx.x] = 0; }
int gemmop_host_helper() { return 1; }
extern "C" BB_EXPORT int gemmop_kernel_impl(const bb_call* call) {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return BB_ERR_DEVICE;
  cublasDestroy(h);
  gemmop_kernel<<<1, 1, 0, static_cast<cudaStream_t>(call->stream)>>>(nullptr);
  return BB_OK;
}
)";
  const auto build = project / "build";
  auto configure = e2e::run_program({BB_CMAKE, "-S", project.string(), "-B", build.string(), "-G", "Ninja",
                                     "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DBACKENDBENCH_ROOT=" + root.string()},
                                    300);
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  EXPECT_NE(configure.out.find("BackendBench: no CMAKE_BUILD_TYPE given: Release"), std::string::npos) << configure.out;
  EXPECT_EQ((configure.out + configure.err).find("HIP"), std::string::npos) << configure.out << configure.err;
  EXPECT_EQ(configure.err.find("without optimisation"), std::string::npos) << configure.err;
  auto made = e2e::run_program({BB_CMAKE, "--build", build.string()}, 540);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;

  auto exported = [](const fs::path& lib) {
    auto nm = e2e::run_program({"/bin/sh", "-c", "nm -D --defined-only '" + lib.string() + "' | awk '{print $3}' | sort"});
    return nm.out;
  };
  EXPECT_EQ(exported(root / "gemmop" / "gemmop_cpp.so"), "backendbench_plugin_info\ngemmop_kernel_impl\n");
  if (BB_HAVE_CUDA) {
    EXPECT_EQ(exported(root / "gemmop" / "gemmop_cublas.so"), "gemmop_kernel_impl\n");
    auto needed = e2e::run_program({"/bin/sh", "-c", "readelf -d '" + (root / "gemmop" / "gemmop_cublas.so").string() + "'"});
    EXPECT_NE(needed.out.find("libcublas.so"), std::string::npos) << needed.out;
  }

  // A Debug build is warned about: its timings would not be the kernel's.
  auto debug = e2e::run_program({BB_CMAKE, "-S", project.string(), "-B", (project / "debug").string(), "-G", "Ninja",
                                 "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DBACKENDBENCH_ROOT=" + root.string()},
                                300);
  ASSERT_EQ(debug.exit_code, 0) << debug.out << debug.err;
  EXPECT_NE(debug.err.find("gemmop_cpp (gemmop/gemmop_cpp) is built without optimisation"), std::string::npos) << debug.err;

  // An op's name misspelt in BB_KERNEL_IMPL: the build fails, naming what the library exports
  // (without the check it built, and the run said only that the entry point was missing).
  const auto typo = e2e::temp_dir("typo");
  std::ofstream(typo / "CMakeLists.txt") << R"(cmake_minimum_required(VERSION 3.25)
project(gemmop LANGUAGES CXX)
find_package(BackendBench REQUIRED)
backendbench_add_plugin(gemmop_typo OP gemmop SOURCES gemmop_typo.cpp)
)";
  std::ofstream(typo / "gemmop_typo.cpp") << R"(#include <backendbench/plugin.hpp>
namespace { void run(bb::Call&) {} }
BB_KERNEL_IMPL(gemop, run)
)";
  auto typo_configure = e2e::run_program({BB_CMAKE, "-S", typo.string(), "-B", (typo / "build").string(), "-G", "Ninja",
                                          "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DBACKENDBENCH_ROOT=" + root.string()},
                                         300);
  ASSERT_EQ(typo_configure.exit_code, 0) << typo_configure.out << typo_configure.err;
  auto typo_made = e2e::run_program({BB_CMAKE, "--build", (typo / "build").string()}, 300);
  EXPECT_NE(typo_made.exit_code, 0) << typo_made.out;
  // CMake folds long messages: compared with its whitespace made single spaces.
  std::string said;
  for (char ch : typo_made.out + typo_made.err)
    if (!std::isspace(static_cast<unsigned char>(ch))) said += ch;
    else if (!said.empty() && said.back() != ' ') said += ' ';
  EXPECT_NE(said.find("gemmop_typo.so: exports neither gemmop_kernel_impl nor gemmop_reference, so backendbench would not run it; it exports "
                      "gemop_kernel_impl (the op's name misspelt in BB_KERNEL_IMPL?)"),
            std::string::npos)
      << said;
}

// An out-of-tree op as a kernel engineer keeps it (issue 40: the source folder is what runs): a
// C++ reference and implementation, a PyTorch one through backendbench_add_python, ctest tests
// from backendbench_add_tests. It builds into its own build tree by default (the installed root
// is left alone); the built root links the manifest and the Python file to the sources, so an
// edited manifest is what the next run reads, without a rebuild; ctest registers the Python
// implementation beside the library; the installed root holds copies, no links.
TEST(Package, AnOutOfTreeOpRunsFromItsSourcesWithPythonAndCtest) {
  const auto prefix = e2e::temp_dir("src_prefix"), project = e2e::temp_dir("src_project");
  auto install = e2e::run_program({BB_CMAKE, "--install", BB_BUILD_DIR, "--prefix", prefix.string()}, 300);
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  const fs::path installed_root = prefix / "share" / "backendbench" / "custom_ops";
  for (const auto& e : fs::recursive_directory_iterator(installed_root))
    EXPECT_FALSE(fs::is_symlink(e.symlink_status())) << e.path() << ": the installed root holds copies, not links into a source tree";
  EXPECT_TRUE(fs::is_regular_file(installed_root / "myop" / "gen_input.yaml"));

  std::ofstream(project / "CMakeLists.txt") << R"(cmake_minimum_required(VERSION 3.25)
project(twice LANGUAGES CXX)
find_package(BackendBench REQUIRED)
enable_testing()
backendbench_add_plugin(twice_reference OP twice SOURCES twice_reference.cpp)
backendbench_add_plugin(twice_cpp OP twice SOURCES twice_cpp.cpp)
backendbench_add_python(OP twice SOURCES twice_torch.py)
backendbench_add_tests(ARGS --correctness-only)
)";
  const std::string manifest = "op: twice\ninputs:\n  - name: x\noutputs:\n  - {name: y, shape: x, dtype: x}\ntests:\n  correctness:\n"
                               "    - name: vector\n      params: {n: [1, 100]}\n      inputs:\n        x: {shape: [n], dtype: float32, init: randn}\n";
  std::ofstream(project / "gen_input.yaml") << manifest;
  for (const char* name : {"twice_reference", "twice_cpp"})
    std::ofstream(project / (std::string(name) + ".cpp")) << R"(#include <backendbench/plugin.hpp>
namespace {
void run(bb::Call& c) {
  auto x = c.input<float>("x");
  auto y = c.output<float>("y");
  for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = 2.0f * x.data()[i];
}
}  // namespace
)" << (std::string(name) == "twice_reference" ? "BB_REFERENCE(twice, run)\n" : "BB_KERNEL_IMPL(twice, run)\n")
                                                                  << "BB_PLUGIN_INFO(\"1.0\", \"cpu\", \"float32\")\n";
  // The Python implementation also tries to plant a file beside its source (through the link the
  // root holds): the folder is read-only to it, so nothing lands there, and it still computes.
  std::ofstream(project / "twice_torch.py")
      << "import os\nimport torch\n\nBACKENDBENCH_INFO = {\"devices\": [\"cpu\"], \"version\": \"1\"}\n\n\n"
         "def twice_kernel_impl(x):\n"
         "    try:\n"
         "        with open(os.path.join(os.path.dirname(os.path.realpath(__file__)), 'planted.txt'), 'w') as f:\n"
         "            f.write('the source folder was writable')\n"
         "    except OSError:\n"
         "        pass\n"
         "    return x * 2.0\n";
  const auto build = project / "build";
  auto configure = e2e::run_program({BB_CMAKE, "-S", project.string(), "-B", build.string(), "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix.string()}, 300);
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  auto made = e2e::run_program({BB_CMAKE, "--build", build.string()}, 300);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  // Its own build tree, not the installed root.
  const fs::path root = build / "custom_ops";
  EXPECT_TRUE(fs::exists(root / "twice" / "twice_cpp.so"));
  EXPECT_FALSE(fs::exists(installed_root / "twice")) << "an out-of-tree build wrote into the installed root";
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(root / "twice" / "gen_input.yaml")));
  EXPECT_EQ(fs::canonical(root / "twice" / "twice_torch.py"), fs::canonical(project / "twice_torch.py"));

  // ctest lists the library and the Python implementation (the reference is no test).
  auto listed = e2e::run_program({BB_CTEST, "--test-dir", build.string(), "-N"}, 60);
  EXPECT_NE(listed.out.find("backendbench.twice__twice_cpp"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("backendbench.twice__twice_torch"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("twice_reference"), std::string::npos) << listed.out;

  const std::string binary = (prefix / "bin" / "backendbench").string();
  auto run = [&](const char* logs) {
    auto r = e2e::run_program({binary, "--custom-ops-root", root.string(), "--correctness-only", "--log-dir", (project / logs).string()}, 300);
    return std::pair{r, e2e::read_json(project / logs / "results.json")};
  };
  auto [first, first_results] = run("logs1");
  EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
  std::size_t cpp = e2e::tests_of(first_results, "twice__twice_cpp").size();
  EXPECT_GT(cpp, 0u) << first.out;
  const bool torch = first.out.find("No module named 'torch'") == std::string::npos;
  if (torch) EXPECT_EQ(e2e::tests_of(first_results, "twice__twice_torch").size(), cpp) << first.out << first.err;

  // The manifest edited in the source folder: the next run has the new case, nothing rebuilt.
  std::ofstream(project / "gen_input.yaml") << std::regex_replace(manifest, std::regex("n: \\[1, 100\\]"), "n: [1, 100, 4099]");
  auto [second, second_results] = run("logs2");
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_GT(e2e::tests_of(second_results, "twice__twice_cpp").size(), cpp) << second.out;
  bool big = false;
  for (const auto& t : e2e::tests_of(second_results, "twice__twice_cpp")) {
    big = big || t["case"].get<std::string>().find("n=4099") != std::string::npos;
    EXPECT_EQ(t["verdict"], "PASS") << t.dump();
  }
  EXPECT_TRUE(big) << second.out;
  if (torch) {
    for (const auto& t : e2e::tests_of(second_results, "twice__twice_torch")) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
    EXPECT_FALSE(fs::exists(project / "planted.txt")) << "a worker wrote into the source folder the root links to";
  }
}
