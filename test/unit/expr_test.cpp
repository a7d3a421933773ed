#include <gtest/gtest.h>

#include "plan/expr.hpp"

namespace {

class Env : public bb::ExprEnv {
 public:
  std::optional<double> variable(std::string_view n) const override {
    if (n == "rows") return 7;
    if (n == "cols") return 128;
    if (n == "x.0") return 3;
    if (n == "x.-1") return 5;
    return std::nullopt;
  }
  std::optional<double> tensor_function(std::string_view fn, std::string_view arg) const override {
    if (arg != "x") return std::nullopt;
    return fn == "numel" ? 15.0 : 2.0;
  }
};

double eval(const char* s) {
  auto v = bb::evaluate(s, Env{});
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : -1;
}

TEST(Expr, ArithmeticWithPrecedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("2 ** 3 ** 2"), 512);  // right-associative
  EXPECT_EQ(eval("-2 ** 2"), -4);
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 // 2"), -4);  // floor, like Python
  EXPECT_EQ(eval("7 % 3"), 1);
  EXPECT_DOUBLE_EQ(eval("7 / 2"), 3.5);
  EXPECT_DOUBLE_EQ(eval("1e3 + 0.5"), 1000.5);
}

TEST(Expr, NamesDimsAndFunctions) {
  EXPECT_EQ(eval("rows * cols"), 896);
  EXPECT_EQ(eval("x.0 * x.-1"), 15);
  EXPECT_EQ(eval("2 * numel(x) * sizeof(x)"), 60);
  EXPECT_EQ(eval("min(rows, cols) + max(rows, cols)"), 135);
  EXPECT_EQ(eval("ceil_div(cols, rows)"), 19);
}

TEST(Expr, ErrorsSayWhatAndWhere) {
  auto v = bb::evaluate("rows * colz", Env{});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("unknown name 'colz'"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("column 8"), std::string::npos) << v.error().message;

  EXPECT_FALSE(bb::evaluate("rows +", Env{}).ok());
  EXPECT_FALSE(bb::evaluate("(rows", Env{}).ok());
  EXPECT_FALSE(bb::evaluate("rows / 0", Env{}).ok());
  EXPECT_FALSE(bb::evaluate("numel(y)", Env{}).ok());
  EXPECT_FALSE(bb::evaluate("foo(1)", Env{}).ok());
  EXPECT_FALSE(bb::evaluate("rows rows", Env{}).ok());
}

TEST(Expr, DimensionsMustBeNonNegativeIntegers) {
  EXPECT_EQ(*bb::evaluate_dimension("rows * 2", Env{}), 14);
  EXPECT_FALSE(bb::evaluate_dimension("rows / 2", Env{}).ok());
  EXPECT_FALSE(bb::evaluate_dimension("0 - rows", Env{}).ok());
}

}  // namespace

namespace {

TEST(Expr, ConditionsForPreconditions) {
  EXPECT_EQ(eval("cols % 4 == 0"), 1);
  EXPECT_EQ(eval("rows % 4 == 0"), 0);
  EXPECT_EQ(eval("x.-1 != 5"), 0);
  EXPECT_EQ(eval("rows < cols and cols <= 128"), 1);
  EXPECT_EQ(eval("rows > cols or x.0 >= 3"), 1);
  EXPECT_EQ(eval("not rows == 7"), 0);
  EXPECT_EQ(eval("not (rows == 8) and (cols // 2 == 64)"), 1);
  EXPECT_EQ(eval("1 + 1 == 2"), 1);  // arithmetic binds tighter than comparison
  EXPECT_EQ(eval("sqrt(cols * 2)"), 16);
  EXPECT_NEAR(eval("1 / sqrt(cols)"), 0.0883883, 1e-6);
  // A keyword is a whole word: "orders" would be a name, and it is unknown.
  auto v = bb::evaluate("rows == 7 orders", Env{});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("unexpected 'o' at column 11"), std::string::npos) << v.error().message;
  auto neg = bb::evaluate("sqrt(0 - 1)", Env{});
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.error().message.find("sqrt of a negative number"), std::string::npos) << neg.error().message;
}

}  // namespace
