// Python implementations (issue 22): .py files of an op's folder, imported by the worker that
// serves them (plugins/python), checked and timed as libraries are, beside them.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

namespace {

// Why this build or machine cannot run Python implementations, or "".
std::string python_unavailable(const nlohmann::json& r) {
  for (const auto& t : e2e::tests_of(r, "scale__scale_torch")) {
    const std::string m = t.value("message", "");
    if (m.find("no Python bridge") != std::string::npos) return "built without python3-dev";
    if (m.find("No module named 'torch'") != std::string::npos) return "PyTorch is not importable (python3-torch)";
  }
  for (const auto& e : r["ops"][0].value("errors", nlohmann::json::array()))
    if (e.get<std::string>().find("no Python bridge") != std::string::npos) return "built without python3-dev";
  return "";
}

std::string verdicts(const nlohmann::json& r, const std::string& impl) {
  std::string out;
  for (const auto& t : e2e::tests_of(r, impl)) out += t["verdict"].get<std::string>() + " ";
  return out;
}

std::string first_message(const nlohmann::json& r, const std::string& impl) {
  const auto t = e2e::tests_of(r, impl);
  return t.empty() ? "(no test)" : t.front().value("message", "");
}

}  // namespace

// Right (returned, and written through out=), wrong, raising, the wrong shape, hanging, crashing
// the interpreter, not importable: each its verdict, with the reason, beside a C++ reference and
// a C++ implementation; a helper module of the folder is no implementation.
TEST(PythonImpl, EachGetsItsVerdictBesideTheLibraries) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("python"), "--log-dir", logs.string(), "--correctness-only",
                           "--test-timeout", "3"});
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 2) << "scale_syntax.py cannot be used\n" << run.out << run.err;
  EXPECT_EQ(verdicts(r, "scale__scale_torch"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_out"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_good"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_wrong"), "FAIL FAIL FAIL ");
  EXPECT_EQ(verdicts(r, "scale__scale_raise"), "ERROR ERROR ERROR ");
  EXPECT_NE(first_message(r, "scale__scale_raise").find("Traceback"), std::string::npos) << first_message(r, "scale__scale_raise");
  EXPECT_NE(first_message(r, "scale__scale_raise").find("scale_raise.py\", line 3"), std::string::npos) << first_message(r, "scale__scale_raise");
  EXPECT_NE(first_message(r, "scale__scale_raise").find("ValueError: scale_raise: refusing to scale 16 elements"), std::string::npos);
  EXPECT_EQ(verdicts(r, "scale__scale_shape"), "ERROR ERROR ERROR ");
  EXPECT_NE(first_message(r, "scale__scale_shape").find("returned shape (15,), float32 on cpu; expected shape (16,), float32 on cpu"),
            std::string::npos)
      << first_message(r, "scale__scale_shape");
  EXPECT_EQ(verdicts(r, "scale__scale_hang"), "TIMEOUT TIMEOUT TIMEOUT ");
  EXPECT_EQ(verdicts(r, "scale__scale_crash"), "CRASH CRASH CRASH ");
  EXPECT_TRUE(e2e::tests_of(r, "scale__helper").empty()) << "helper.py names no entry point";
  EXPECT_TRUE(e2e::tests_of(r, "scale__scale_syntax").empty());
  EXPECT_NE(run.err.find("scale_syntax.py\", line 2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("SyntaxError"), std::string::npos) << run.err;
}

// A .py and a .so implementation of one op, timed against the same baseline, scored side by side.
TEST(PythonImpl, IsTimedAndScoredBesideALibrary) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("python"), "--log-dir", logs.string(), "--impls", "scale_torch,scale_good",
                           "--timeout", "0.2", "--min-time", "0.01"});
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;  // scale_syntax.py is still in the folder
  for (const std::string impl : {"scale__scale_torch", "scale__scale_good"}) {
    EXPECT_EQ(verdicts(r, impl), "PASS PASS PASS ") << r.dump();
    int timed = 0;
    for (const auto& t : e2e::tests_of(r, impl))
      if (t.contains("timing")) {
        ++timed;
        EXPECT_GT(t["speedup"].get<double>(), 0.0) << t.dump();
      }
    EXPECT_EQ(timed, 1) << impl;
  }
  EXPECT_NE(run.out.find("scale__scale_torch"), std::string::npos);
  EXPECT_NE(run.out.find("scale__scale_good"), std::string::npos);
}
