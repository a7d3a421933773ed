#include "plan/expr.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace bb {
namespace {

// Recursive-descent parser that evaluates while parsing.
//   cond   := conj ('or' conj)*                         (true is 1, false 0)
//   conj   := neg ('and' neg)*
//   neg    := 'not' neg | cmp
//   cmp    := expr (('==' | '!=' | '<=' | '>=' | '<' | '>') expr)?
//   expr   := term (('+' | '-') term)*
//   term   := unary (('*' | '/' | '//' | '%') unary)*
//   unary  := ('-' | '+') unary | power
//   power  := atom ('**' unary)?
//   atom   := number | name | name '(' args ')' | '(' cond ')'
class Parser {
 public:
  Parser(std::string_view text, const ExprEnv& env) : s_(text), env_(env) {}

  Expected<double> run() {
    double v = cond();
    skip_space();
    if (!err_.empty()) return make_error(err_);
    if (pos_ != s_.size()) return make_error(fmt::format("unexpected '{}' at column {} of '{}'", s_[pos_], pos_ + 1, s_));
    return v;
  }

 private:
  void fail(const std::string& what) {
    if (err_.empty()) err_ = fmt::format("{} at column {} of '{}'", what, pos_ + 1, s_);
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip_space();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  bool peek(std::string_view tok) {
    skip_space();
    return s_.substr(pos_, tok.size()) == tok;
  }

  // A keyword: the word, not the start of a longer name ("order" is no "or").
  bool eat_word(std::string_view word) {
    skip_space();
    if (s_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_' || s_[end] == '.')) return false;
    pos_ = end;
    return true;
  }
  double cond() {
    double v = conj();
    while (err_.empty() && eat_word("or")) {
      const double b = conj();
      v = (v != 0 || b != 0) ? 1.0 : 0.0;
    }
    return v;
  }
  double conj() {
    double v = neg();
    while (err_.empty() && eat_word("and")) {
      const double b = neg();
      v = (v != 0 && b != 0) ? 1.0 : 0.0;
    }
    return v;
  }
  double neg() {
    if (eat_word("not")) return neg() == 0 ? 1.0 : 0.0;
    return cmp();
  }
  double cmp() {
    const double a = expr();
    if (!err_.empty()) return a;
    if (eat("==")) return a == expr() ? 1.0 : 0.0;
    if (eat("!=")) return a != expr() ? 1.0 : 0.0;
    if (eat("<=")) return a <= expr() ? 1.0 : 0.0;
    if (eat(">=")) return a >= expr() ? 1.0 : 0.0;
    if (eat("<")) return a < expr() ? 1.0 : 0.0;
    if (eat(">")) return a > expr() ? 1.0 : 0.0;
    return a;
  }
  double expr() {
    double v = term();
    while (err_.empty()) {
      if (eat("+")) v += term();
      else if (eat("-")) v -= term();
      else break;
    }
    return v;
  }
  double term() {
    double v = unary();
    while (err_.empty()) {
      if (peek("**")) break;
      if (eat("//")) {
        double d = unary();
        if (d == 0) return fail("division by zero"), 0.0;
        v = std::floor(v / d);
      } else if (eat("*")) {
        v *= unary();
      } else if (eat("/")) {
        double d = unary();
        if (d == 0) return fail("division by zero"), 0.0;
        v /= d;
      } else if (eat("%")) {
        double d = unary();
        if (d == 0) return fail("modulo by zero"), 0.0;
        v = v - std::floor(v / d) * d;
      } else {
        break;
      }
    }
    return v;
  }
  double unary() {
    if (eat("-")) return -unary();
    if (eat("+")) return unary();
    return power();
  }
  double power() {
    double base = atom();
    if (eat("**")) return std::pow(base, unary());
    return base;
  }
  std::string_view name() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
        ++pos_;
      } else if (c == '-' && pos_ > start && s_[pos_ - 1] == '.') {  // x.-1
        ++pos_;
      } else {
        break;
      }
    }
    return s_.substr(start, pos_ - start);
  }
  double atom() {
    skip_space();
    if (pos_ >= s_.size()) return fail("expected a number, a name or '('"), 0.0;
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      double v = cond();
      if (!eat(")")) fail("expected ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.data() + pos_;
      char* end = nullptr;
      std::string tmp(begin, s_.size() - pos_);
      double v = std::strtod(tmp.c_str(), &end);
      size_t used = static_cast<size_t>(end - tmp.c_str());
      if (used == 0) return fail("expected a number"), 0.0;
      pos_ += used;
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t at = pos_;
      std::string_view n = name();
      if (eat("(")) return call(n, at);
      if (auto v = env_.variable(n)) return *v;
      pos_ = at;
      return fail(fmt::format("unknown name '{}'", n)), 0.0;
    }
    return fail("expected a number, a name or '('"), 0.0;
  }
  double call(std::string_view fn, size_t at) {
    if (fn == "numel" || fn == "sizeof") {
      std::string_view arg = name();
      if (!eat(")")) return fail(fmt::format("expected ')' after the argument of {}", fn)), 0.0;
      if (auto v = env_.tensor_function(fn, arg)) return *v;
      pos_ = at;
      return fail(fmt::format("{}({}): '{}' is not a tensor{}", fn, arg, arg, fn == "sizeof" ? ", a dtype or a dtype parameter" : "")), 0.0;
    }
    if (fn == "sqrt") {
      const double a = expr();
      if (!eat(")")) return fail("expected ')'"), 0.0;
      if (a < 0) return fail("sqrt of a negative number"), 0.0;
      return std::sqrt(a);
    }
    if (fn == "min" || fn == "max" || fn == "ceil_div") {
      double a = expr();
      if (!eat(",")) return fail(fmt::format("{} takes two arguments", fn)), 0.0;
      double b = expr();
      if (!eat(")")) return fail("expected ')'"), 0.0;
      if (fn == "min") return std::min(a, b);
      if (fn == "max") return std::max(a, b);
      if (b == 0) return fail("ceil_div by zero"), 0.0;
      return std::ceil(a / b);
    }
    pos_ = at;
    return fail(fmt::format("unknown function '{}' (expected numel, sizeof, sqrt, min, max or ceil_div)", fn)), 0.0;
  }

  std::string_view s_;
  const ExprEnv& env_;
  size_t pos_ = 0;
  std::string err_;
};

}  // namespace

Expected<double> evaluate(std::string_view text, const ExprEnv& env) { return Parser(text, env).run(); }

Expected<long long> evaluate_dimension(std::string_view text, const ExprEnv& env) {
  auto v = evaluate(text, env);
  if (!v) return v.error();
  double d = *v;
  if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d > 9.0e15)
    return make_error(fmt::format("'{}' evaluates to {}, expected a non-negative integer", text, d));
  return static_cast<long long>(d);
}

}  // namespace bb
