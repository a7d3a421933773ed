// The Triton AOT helper (cmake/backendbench_triton_aot.py, cmake/BackendBenchTriton.cmake) where
// Triton is absent: a stand-in Triton (test/fixtures/fake_triton) writes what Triton's compiler
// writes, in its shape, and the helper is run for real on it, down to a built plugin. The real
// compiler's output is tested on the GPU machine (Gpu.TritonAotPluginPassesVectorAddInEveryDtype).
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kScript = std::string(BB_SOURCE_DIR) + "/cmake/backendbench_triton_aot.py";
const std::string kFake = std::string("PYTHONPATH=") + BB_SOURCE_DIR + "/test/fixtures/fake_triton";
const std::string kKernel = std::string(BB_SOURCE_DIR) + "/custom_ops/vector_add/vector_add_triton.py";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

e2e::Run aot(const std::string& name, const fs::path& out, std::vector<std::string> env = {}) {
  std::vector<std::string> args{"/usr/bin/env", kFake};
  args.insert(args.end(), env.begin(), env.end());
  args.insert(args.end(), {"python3", kScript, "--kernel", kKernel, "--name", name, "--signature", "*fp32:16, *fp32:16, *fp32:16, i64:16, 1024",
                           "--grid", "(n + 1023) / 1024, 1, 1", "--num-warps", "4", "--out-name", "add_f32", "--out-dir", out.string()});
  return e2e::run_program(args, 60);
}

}  // namespace

TEST(TritonAot, GeneratedSourcesGetStableNamesAndALoadThatReturnsErrors) {
  const auto out = e2e::temp_dir("aot");
  auto run = aot("add_kernel", out);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string h = read(out / "add_f32.h"), c = read(out / "add_f32.c");
  // The launch function keeps Triton's hashed name; the stable name is a macro for it.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(h, m, std::regex(R"(#define add_f32_launch (add_f32_[0-9a-f]{8}_\w+))"))) << h;
  const std::string full = m[1];
  EXPECT_NE(h.find("CUresult " + full + "(CUstream stream, CUdeviceptr x_ptr, CUdeviceptr y_ptr, CUdeviceptr out_ptr, int64_t n);"),
            std::string::npos) << h;
  EXPECT_NE(h.find("CUresult add_f32_load(void);"), std::string::npos) << h;
  EXPECT_NE(h.find("extern \"C\""), std::string::npos) << h;
  EXPECT_NE(h.find("#define ADD_F32_NUM_THREADS (4 * 32)"), std::string::npos) << h;
  EXPECT_NE(h.find("0.0.0+fake"), std::string::npos) << h;
  // The load added: the kernel's entry found by name, every error returned, the module kept only
  // once everything succeeded, and never exit() (which Triton's own load calls).
  const auto load = c.substr(c.find("CUresult add_f32_load(void)"));
  EXPECT_NE(load.find("cuModuleGetFunction(&func, mod, \"add_kernel\")"), std::string::npos) << load;
  EXPECT_NE(load.find("cuModuleUnload(mod);\n    return r;"), std::string::npos) << load;
  EXPECT_NE(load.find(full + "_func = func;"), std::string::npos) << load;
  EXPECT_EQ(load.find("exit("), std::string::npos) << load;
  // What the compiler was asked for reached it.
  EXPECT_NE(c.find("signature: *fp32:16, *fp32:16, *fp32:16, i64:16, 1024"), std::string::npos);
  if (std::string(BB_CUDA_INCLUDE_DIR).empty()) GTEST_SKIP() << "built without CUDA: the generated C is not compiled";
  auto cc = e2e::run_program({"/usr/bin/env", "cc", "-fsyntax-only", "-Wall", "-Werror", std::string("-I") + BB_CUDA_INCLUDE_DIR, (out / "add_f32.c").string()});
  EXPECT_EQ(cc.exit_code, 0) << cc.out << cc.err;
}

TEST(TritonAot, ACompileErrorNamesTheKernelFileAndShowsTritonsMessage) {
  auto run = aot("broken", e2e::temp_dir("aot"));
  EXPECT_EQ(run.exit_code, 1);
  for (const char* part : {"vector_add_triton.py: triton.tools.compile of 'broken' with signature", "failed (exit 1)",
                           "NameError('undefined_thing is not defined')"})
    EXPECT_NE(run.err.find(part), std::string::npos) << part << "\n" << run.err;
  auto missing = aot("no_such_kernel", e2e::temp_dir("aot"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no_such_kernel"), std::string::npos) << missing.err;
}

TEST(TritonAot, TheProbeSaysWhyNoPluginCanBeBuilt) {
  auto ok = e2e::run_program({"/usr/bin/env", kFake, "python3", kScript, "--probe"}, 60);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "0.0.0+fake;cuda:90\n");
  auto no_gpu = e2e::run_program({"/usr/bin/env", kFake, "FAKE_TRITON_NO_GPU=1", "python3", kScript, "--probe"}, 60);
  EXPECT_EQ(no_gpu.exit_code, 1);
  EXPECT_NE(no_gpu.out.find("Triton 0.0.0+fake finds no GPU to compile for: 0 active drivers"), std::string::npos) << no_gpu.out;
}

// backendbench_add_triton_plugin() in a real configure and build of the vector_add op: three
// dtypes, two variants each, one plugin exporting only the ABI's symbols.
TEST(TritonAot, TheCMakeHelperBuildsVectorAddTritonFromTheCompilersOutput) {
  if (!BB_HAVE_CUDA) GTEST_SKIP() << "built without CUDA: Triton plugins need the CUDA driver library";
  const auto dir = e2e::temp_dir("build");
  auto cfg = e2e::run_program({"/usr/bin/env", kFake, BB_CMAKE, "-S", BB_SOURCE_DIR, "-B", dir.string(), "-G", "Ninja", "-DBACKENDBENCH_OPS=vector_add",
                               "-DBACKENDBENCH_BUILD_TESTS=OFF", "-DBACKENDBENCH_HIP=OFF", "-DCMAKE_CUDA_ARCHITECTURES=90",
                               "-DBACKENDBENCH_TRITON_PYTHON=python3", std::string("-DDLPACK_INCLUDE_DIR=") + BB_DLPACK_INCLUDE_DIR},
                              300);
  ASSERT_EQ(cfg.exit_code, 0) << cfg.out << cfg.err;
  EXPECT_NE(cfg.out.find("Triton 0.0.0+fake compiles Triton plugins for cuda:90"), std::string::npos) << cfg.out;
  auto build = e2e::run_program({"/usr/bin/env", kFake, BB_CMAKE, "--build", dir.string(), "--target", "vector_add_triton"}, 300);
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  for (const char* v : {"add_f32", "add_f32_n16", "add_f16", "add_f16_n16", "add_bf16", "add_bf16_n16"})
    EXPECT_NE(build.out.find(std::string("Triton AOT: add_kernel of vector_add_triton.py as ") + v + " ("), std::string::npos) << v << build.out;
  const auto so = dir / "custom_ops" / "vector_add" / "vector_add_triton.so";
  ASSERT_TRUE(fs::exists(so)) << build.out;
  auto nm = e2e::run_program({"/usr/bin/env", "nm", "-D", "--defined-only", so.string()});
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  EXPECT_NE(nm.out.find(" vector_add_kernel_impl"), std::string::npos) << nm.out;
  EXPECT_NE(nm.out.find(" backendbench_plugin_info"), std::string::npos) << nm.out;
  // Triton's globals (module, function, cubin) stay inside the plugin.
  EXPECT_EQ(nm.out.find("_cubin"), std::string::npos) << nm.out;
  EXPECT_EQ(nm.out.find("_load"), std::string::npos) << nm.out;
}

// Out of tree, as docs/adding-an-op.md shows: find_package(BackendBench) from an install prefix,
// backendbench_enable_cuda(), include(BackendBenchTriton), backendbench_add_triton_plugin().
TEST(TritonAot, AnOutOfTreeProjectBuildsATritonPluginAgainstTheInstalledPackage) {
  if (!BB_HAVE_CUDA) GTEST_SKIP() << "built without CUDA: Triton plugins need the CUDA driver library";
  const auto prefix = e2e::temp_dir("prefix"), project = e2e::temp_dir("project"), root = e2e::temp_dir("root");
  auto install = e2e::run_program({BB_CMAKE, "--install", BB_BUILD_DIR, "--prefix", prefix.string()}, 120);
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  const fs::path op = fs::path(BB_SOURCE_DIR) / "custom_ops" / "vector_add";
  for (const char* f : {"vector_add_triton.py", "vector_add_triton.cpp", "gen_input.yaml"}) fs::copy_file(op / f, project / f);
  std::ofstream(project / "CMakeLists.txt") << R"(cmake_minimum_required(VERSION 3.25)
project(mine LANGUAGES CXX)
find_package(BackendBench REQUIRED)
backendbench_enable_cuda()
include(BackendBenchTriton)
if(NOT BACKENDBENCH_HAVE_TRITON)
  message(FATAL_ERROR "no Triton: ${BACKENDBENCH_TRITON_MISSING}")
endif()
backendbench_add_triton_plugin(vector_add_triton OP vector_add SOURCES vector_add_triton.cpp
  KERNEL vector_add_triton.py NAME add_kernel GRID "(n + 1023) / 1024, 1, 1"
  VARIANT add_f32 "*fp32:16, *fp32:16, *fp32:16, i64, 1024" VARIANT add_f32_n16 "*fp32:16, *fp32:16, *fp32:16, i64:16, 1024"
  VARIANT add_f16 "*fp16:16, *fp16:16, *fp16:16, i64, 1024" VARIANT add_f16_n16 "*fp16:16, *fp16:16, *fp16:16, i64:16, 1024"
  VARIANT add_bf16 "*bf16:16, *bf16:16, *bf16:16, i64, 1024" VARIANT add_bf16_n16 "*bf16:16, *bf16:16, *bf16:16, i64:16, 1024")
)";
  const auto build = project / "build";
  auto cfg = e2e::run_program({"/usr/bin/env", kFake, BB_CMAKE, "-S", project.string(), "-B", build.string(), "-G", "Ninja",
                               "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DBACKENDBENCH_ROOT=" + root.string(),
                               "-DCMAKE_CUDA_ARCHITECTURES=90", std::string("-DBackendBench_DLPACK_INCLUDE_DIR=") + BB_DLPACK_INCLUDE_DIR},
                              300);
  ASSERT_EQ(cfg.exit_code, 0) << cfg.out << cfg.err;
  auto b = e2e::run_program({"/usr/bin/env", kFake, BB_CMAKE, "--build", build.string()}, 300);
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_TRUE(fs::exists(root / "vector_add" / "vector_add_triton.so")) << b.out;
  EXPECT_TRUE(fs::exists(root / "vector_add" / "gen_input.yaml"));
}
