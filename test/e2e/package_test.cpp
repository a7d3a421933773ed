// Selective build of the shipped ops (-DBACKENDBENCH_OPS), as ExecuTorch's selective build:
// configured for real; only the named ops get targets; an unknown name stops the configure
// with the list of what exists.
#include <fstream>
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
