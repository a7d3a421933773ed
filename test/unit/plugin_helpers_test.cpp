// The C++ helper header as a plugin author uses it: views, attributes, dispatch, and the
// export macro's exception handling, called through the C ABI.
#include <gtest/gtest.h>

#include <backendbench/plugin.hpp>

#include "worker/call_frame.hpp"

namespace {

void helper_kernel(bb::Call& c) {
  auto x = c.input<float>("x");
  auto y = c.output<float>(0);
  const double scale = c.attr<double>("scale", 1.0);
  const int64_t offset = c.attr<int64_t>("offset", 0);
  const bool negate = c.attr<bool>("negate", false);
  const std::string mode = c.attr("mode", "plain");
  const auto weights = c.attr<std::vector<double>>("weights", {});
  const double missing = c.attr<double>("no_such_attr", 7.0);
  BB_CHECK(missing == 7.0, "default for a missing attribute");
  BB_CHECK(x.ndim() == 2 && x.size(-1) == 3 && x.stride(0) == 3, "shape and strides");
  BB_CHECK(x.at(1, 2) == x[5], "strided access");
  BB_CHECK(mode == "plain" || mode == "fancy", "mode");
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x[i] * scale + static_cast<double>(offset) + (weights.empty() ? 0.0 : weights[0]);
    y[i] = static_cast<float>(negate ? -v : v);
  }
  if (mode == "fancy") throw std::runtime_error("fancy mode is not implemented");
}

}  // namespace

BB_KERNEL_IMPL(helpertest, helper_kernel)
BB_PLUGIN_INFO("9.8.7", "cpu,cuda", "float32")

namespace {

bb::ConcreteCase make_case(std::vector<std::pair<std::string, bb::AttrValue>> attrs) {
  bb::ConcreteCase c;
  bb::ConcreteTensor x;
  x.name = "x";
  x.shape = {2, 3};
  c.inputs.push_back(x);
  bb::ConcreteOutput y;
  y.name = "y";
  y.shape = {2, 3};
  c.outputs.push_back(y);
  c.attrs = std::move(attrs);
  return c;
}

}  // namespace

TEST(PluginHelpers, AttributesViewsAndTheCAbi) {
  std::vector<float> x{0, 1, 2, 3, 4, 5}, y(6, 0.f);
  auto c = make_case({{"scale", 2.0}, {"offset", int64_t{1}}, {"negate", true}, {"mode", std::string("plain")},
                      {"weights", std::vector<double>{0.5}}});
  bb::CallFrame frame("helpertest", c, {x.data()}, {y.data()}, DLDevice{kDLCPU, 0}, nullptr);
  ASSERT_EQ(helpertest_kernel_impl(frame.call()), BB_OK) << frame.error_message();
  EXPECT_FLOAT_EQ(y[5], -(5 * 2.0f + 1 + 0.5f));
  EXPECT_EQ(frame.call()->struct_size, sizeof(bb_call));
  EXPECT_EQ(frame.call()->abi_version, static_cast<uint32_t>(BB_ABI_VERSION));
}

TEST(PluginHelpers, ExceptionsBecomeErrorReturnsWithTheirMessage) {
  std::vector<float> x(6, 1.f), y(6);
  auto c = make_case({{"mode", std::string("fancy")}});
  bb::CallFrame frame("helpertest", c, {x.data()}, {y.data()}, DLDevice{kDLCPU, 0}, nullptr);
  EXPECT_EQ(helpertest_kernel_impl(frame.call()), BB_ERR_GENERIC);
  EXPECT_EQ(frame.error_message(), "fancy mode is not implemented");

  auto wrong_kind = make_case({{"scale", std::string("two")}});
  bb::CallFrame f2("helpertest", wrong_kind, {x.data()}, {y.data()}, DLDevice{kDLCPU, 0}, nullptr);
  EXPECT_EQ(helpertest_kernel_impl(f2.call()), BB_ERR_INVALID_ARGUMENT);
  EXPECT_NE(f2.error_message().find("attribute 'scale'"), std::string::npos) << f2.error_message();
}

TEST(PluginHelpers, RefusesACallFromAnotherAbiMajor) {
  std::vector<float> x(6), y(6);
  auto c = make_case({});
  bb::CallFrame frame("helpertest", c, {x.data()}, {y.data()}, DLDevice{kDLCPU, 0}, nullptr);
  bb_call copy = *frame.call();
  copy.abi_version = (2u << 16);
  EXPECT_EQ(helpertest_kernel_impl(&copy), BB_ERR_ABI);
  EXPECT_EQ(helpertest_kernel_impl(nullptr), BB_ERR_INVALID_ARGUMENT);
}

TEST(PluginHelpers, DtypeMismatchInAViewIsAnError) {
  std::vector<double> x(6), y(6);
  auto c = make_case({});
  c.inputs[0].dtype = bb::DType::float64;
  bb::CallFrame frame("helpertest", c, {x.data()}, {y.data()}, DLDevice{kDLCPU, 0}, nullptr);
  EXPECT_EQ(helpertest_kernel_impl(frame.call()), BB_ERR_UNSUPPORTED);
  EXPECT_NE(frame.error_message().find("float64"), std::string::npos) << frame.error_message();
}

TEST(PluginHelpers, InfoRecordFromCommaLists) {
  const bb_plugin_info* info = backendbench_plugin_info();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->struct_size, sizeof(bb_plugin_info));
  EXPECT_STREQ(info->version, "9.8.7");
  ASSERT_EQ(info->num_devices, 2);
  EXPECT_STREQ(info->devices[1], "cuda");
  ASSERT_EQ(info->num_dtypes, 1);
  EXPECT_STREQ(info->dtypes[0], "float32");
}
