// Loading real plugin libraries, good and broken (the bad_plugins fixture root).
#include <gtest/gtest.h>

#include "plugin_library.hpp"

namespace {
const std::string kBad = std::string(BB_FIXTURE_ROOTS) + "/bad_plugins/scale/";

std::string load_error(const std::string& file) {
  auto p = bb::load_plugin(kBad + file, "scale");
  return p.ok() ? "(loaded)" : p.error().message;
}
}  // namespace

TEST(PluginLibrary, LoadsEntryPoints) {
  auto good = bb::load_plugin(kBad + "scale_good.so", "scale");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_NE(good->kernel_impl, nullptr);
  EXPECT_EQ(good->reference, nullptr);
  EXPECT_FALSE(good->info.present);

  auto ref = bb::load_plugin(kBad + "scale_reference.so", "scale");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->kernel_impl, nullptr);
  EXPECT_NE(ref->reference, nullptr);
}

TEST(PluginLibrary, EachFailureSaysWhatWentWrong) {
  EXPECT_NE(load_error("scale_not_a_library.so").find("not a shared library"), std::string::npos) << load_error("scale_not_a_library.so");
  EXPECT_NE(load_error("scale_missing_dep.so").find("unresolved dependency"), std::string::npos) << load_error("scale_missing_dep.so");
  EXPECT_NE(load_error("scale_missing_dep.so").find("libbb_fixture_dep.so"), std::string::npos);
  EXPECT_NE(load_error("scale_unresolved.so").find("unresolved symbol"), std::string::npos) << load_error("scale_unresolved.so");
  EXPECT_NE(load_error("scale_unresolved.so").find("backendbench_fixture_function_that_does_not_exist"), std::string::npos);
  EXPECT_NE(load_error("scale_no_symbol.so").find("missing symbol: exports neither scale_kernel_impl nor scale_reference"),
            std::string::npos)
      << load_error("scale_no_symbol.so");
  EXPECT_NE(load_error("scale_bad_abi.so").find("ABI version 99.0 is not one this host speaks"), std::string::npos)
      << load_error("scale_bad_abi.so");
  EXPECT_NE(load_error("no_such_file.so").find("no such file"), std::string::npos);
}

TEST(PluginLibrary, SameSymbolNamesInManyLibrariesStayApart) {
  // RTLD_LOCAL: two libraries exporting scale_kernel_impl resolve to different functions.
  const std::string hostile = std::string(BB_FIXTURE_ROOTS) + "/hostile/scale/";
  auto a = bb::load_plugin(hostile + "scale_good.so", "scale");
  auto b = bb::load_plugin(hostile + "scale_wrong.so", "scale");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->kernel_impl, b->kernel_impl);
}
