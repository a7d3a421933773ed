// Python implementations (issue 22): .py files of an op's folder, imported by the worker that
// serves them (plugins/python), checked and timed as libraries are, beside them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <set>

#include "e2e_util.hpp"

namespace fs = std::filesystem;
using e2e::backendbench;

namespace {

constexpr const char* kNoBridge = "no Python bridge";

// Why this build or machine cannot run Python implementations, or "".
std::string python_unavailable(const nlohmann::json& r, const std::string& impl = "scale__scale_torch") {
  for (const auto& t : e2e::tests_of(r, impl)) {
    const std::string m = t.value("message", "");
    if (m.find("no Python bridge") != std::string::npos) return "built without python3-dev";
    if (m.find("No module named 'torch'") != std::string::npos) return "PyTorch is not importable (python3-torch)";
  }
  for (const auto& e : r["ops"][0].value("errors", nlohmann::json::array()))
    if (e.get<std::string>().find("no Python bridge") != std::string::npos) return "built without python3-dev";
  return "";
}

// Whether a user other than the owner can read `path` (every folder above it searchable).
bool others_can_reach(fs::path path) {
  for (std::error_code ec; !path.empty() && path != path.root_path(); path = path.parent_path())
    if ((fs::status(path, ec).permissions() & fs::perms::others_exec) == fs::perms::none && fs::is_directory(path, ec)) return false;
  return true;
}

// `python3` as this process's PATH finds it, or "".
std::string python_on_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t at = 0; at <= dirs.size();) {
    const auto end = std::min(dirs.find(':', at), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(at, end - at)) / "python3";
    if (end > at && access(candidate.c_str(), X_OK) == 0) return candidate.string();
    at = end + 1;
  }
  return "";
}

// A run with its timeline (BACKENDBENCH_TRACE_BLOCKS): what it printed, its results.json and
// the timeline's lines.
struct TracedRun {
  e2e::Run run;
  nlohmann::json results;
  std::vector<nlohmann::json> trace;
};
TracedRun traced_run(std::vector<std::string> args) {
  const auto logs = e2e::temp_dir("logs");
  const auto trace = e2e::temp_dir("trace") / "trace.jsonl";
  args.insert(args.end(), {"--log-dir", logs.string()});
  setenv("BACKENDBENCH_TRACE_BLOCKS", trace.c_str(), 1);
  TracedRun t{backendbench(args), {}, {}};
  unsetenv("BACKENDBENCH_TRACE_BLOCKS");
  t.results = e2e::read_json(logs / "results.json");
  t.trace = e2e::read_jsonl(trace);
  return t;
}

std::string verdicts(const nlohmann::json& r, const std::string& impl) {
  std::string out;
  for (const auto& t : e2e::tests_of(r, impl)) out += t["verdict"].get<std::string>() + " ";
  return out;
}

std::string verdict_of(const nlohmann::json& r, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(r, impl))
    if (t["case"] == c) return t["verdict"];
  return "(no test)";
}

std::string message_of(const nlohmann::json& r, const std::string& impl, const std::string& c) {
  for (const auto& t : e2e::tests_of(r, impl))
    if (t["case"] == c) return t.value("message", "");
  return "(no test)";
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
                           "--test-timeout", "12"});  // a worker importing PyTorch with CUDA takes seconds
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 2) << "scale_syntax.py cannot be used\n" << run.out << run.err;
  EXPECT_EQ(verdicts(r, "scale__scale_torch"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_out"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_good"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_wrong"), "FAIL FAIL FAIL ");
  // scale_meddle.py rewrites json.dumps when imported, to make the files imported after it seem
  // HIP-only: a run's survey reads the files' text (nothing of them runs), so the others still
  // run (above), and so does it; where files are imported to be surveyed (`check`, a file whose
  // text does not say), each is imported in a process of its own, and the rewrite reaches its
  // own report only (PythonImpl.AMeddlingImportReachesOnlyItsOwnSurvey).
  EXPECT_EQ(verdicts(r, "scale__scale_meddle"), "PASS PASS PASS ");
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

// Where the files are imported to be surveyed (`check` imports every one), each is imported in a
// process of its own: scale_meddle.py's rewrite of json.dumps (which would make every file
// imported after it seem HIP-only) reaches its own report only.
TEST(PythonImpl, AMeddlingImportReachesOnlyItsOwnSurvey) {
  auto run = backendbench({"check", e2e::fixture_root("python")});
  if (run.out.find("scale__scale_torch: cpu") == std::string::npos && run.out.find("PyTorch") != std::string::npos)
    GTEST_SKIP() << "no PyTorch for Python implementations here";
  EXPECT_NE(run.out.find("scale_meddle.py: declares devices hip;"), std::string::npos) << run.out;
  for (const char* other : {"scale__scale_out: cpu", "scale__scale_torch: cpu", "scale__scale_wrong: cpu"})
    EXPECT_NE(run.out.find(other), std::string::npos) << other << "\n" << run.out;
}

// A .py and a .so implementation of one op, timed against the same baseline, scored side by side.
TEST(PythonImpl, IsTimedAndScoredBesideALibrary) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("python"), "--log-dir", logs.string(), "--impls", "scale_torch,scale_good",
                           "--timeout", "0.2", "--min-time", "0.01"});
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  // scale_syntax.py, which --impls leaves out, is not imported at all (the folder has its reference).
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
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

// The hostile-implementation defences hold for Python: one that skips the work while timed (a
// result cached by size, returned again: the copy into the output is the worker's, untimed),
// one that moves the work out of the call (a tensor subclass computed when read), and one that
// patches the harness (rewrites the glue that calls it) are each caught.
TEST(PythonImpl, HostileOnesAreCaught) {
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("python"), "--log-dir", logs.string(), "--impls",
                           "scale_good,scale_lazy,scale_subclass,scale_patchglue", "--timeout", "0.2", "--min-time", "0.01"});
  const auto r = e2e::read_json(logs / "results.json");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  const std::string perf = "performance/big";
  EXPECT_EQ(verdict_of(r, "scale__scale_good", perf), "PASS") << run.out << run.err;
  EXPECT_EQ(verdict_of(r, "scale__scale_lazy", perf), "FAIL");
  EXPECT_NE(message_of(r, "scale__scale_lazy", perf).find("wrong while timed"), std::string::npos)
      << message_of(r, "scale__scale_lazy", perf);
  EXPECT_EQ(verdicts(r, "scale__scale_subclass"), "ERROR ERROR ERROR ");
  EXPECT_NE(first_message(r, "scale__scale_subclass").find("a subclass of torch.Tensor"), std::string::npos)
      << first_message(r, "scale__scale_subclass");
  EXPECT_EQ(verdicts(r, "scale__scale_patchglue"), "ERROR ERROR ERROR ");
  EXPECT_NE(first_message(r, "scale__scale_patchglue").find("changed BackendBench's Python glue"), std::string::npos)
      << first_message(r, "scale__scale_patchglue");
  for (const auto& i : r["scores"]["implementations"])
    EXPECT_EQ(i["fully_correct"].get<bool>(), i["impl"] == "scale__scale_good") << i.dump();
}

// A BackendBench-py folder as that suite lays it out (gen_input.py, <op>_reference.py and
// implementations), run unchanged: its tests become cases named in order, the reference is
// <op>_reference.py, the right implementations PASS and the wrong one FAILs; one that imports
// the reference from its folder cannot read it (ERROR). The tests are made once: a second run
// finds them in the cache.
TEST(PythonImpl, BackendBenchPyFolderRunsAsItIs) {
  const auto cache = e2e::temp_dir("cache");
  ::setenv("BACKENDBENCH_CACHE_DIR", cache.c_str(), 1);
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", e2e::fixture_root("bbpy"), "--log-dir", logs.string(), "--timeout", "0.2", "--min-time", "0.01"});
  const auto r = e2e::read_json(logs / "results.json");
  if (run.err.find(kNoBridge) != std::string::npos || run.err.find("No module named 'torch'") != std::string::npos ||
      run.err.find("they need PyTorch") != std::string::npos)
    GTEST_SKIP() << "no Python bridge or no PyTorch";
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(r["ops"][0]["reference"], "axpy_reference") << r["ops"][0].dump();
  std::vector<std::string> cases;
  for (const auto& t : e2e::tests_of(r, "axpy__axpy_torch")) cases.push_back(t["case"]);
  EXPECT_EQ(cases, (std::vector<std::string>{"correctness/test_0", "correctness/test_1", "correctness/test_2", "performance/test_0"}));
  EXPECT_EQ(verdicts(r, "axpy__axpy_torch"), "PASS PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "axpy__axpy_out"), "PASS PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "axpy__axpy_wrong"), "FAIL FAIL FAIL FAIL ");
  EXPECT_EQ(verdicts(r, "axpy__axpy_peek"), "ERROR ERROR ERROR ERROR ");
  EXPECT_NE(first_message(r, "axpy__axpy_peek").find("No module named 'axpy_reference'"), std::string::npos) << first_message(r, "axpy__axpy_peek");
  for (const auto& t : e2e::tests_of(r, "axpy__axpy_torch"))
    if (t["kind"] == "performance") EXPECT_TRUE(t.contains("speedup")) << t.dump();

  auto again = backendbench({"--custom-ops-root", e2e::fixture_root("bbpy"), "--no-log", "--correctness-only", "--impls", "axpy_torch"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  int made = 0;
  for (const auto& e : fs::directory_iterator(cache / "generated")) made += e.is_directory() ? 1 : 0;
  EXPECT_EQ(made, 1) << "made once, then found in the cache";
  ::unsetenv("BACKENDBENCH_CACHE_DIR");
}

// `new-op --lang python` writes an op that runs as written, with no build step: `check` imports
// its files without running a kernel, and a run passes its PyTorch implementation (its Triton
// one is for CUDA: SKIPPED without a GPU, PASS on the H100).
TEST(PythonImpl, NewOpWritesAPythonOpThatRunsAsWritten) {
  const auto work = e2e::temp_dir("work");
  auto made = backendbench({"new-op", "pyop", "--lang", "python", "--root", work.string()});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  for (const char* f : {"gen_input.yaml", "pyop_reference.py", "pyop_torch.py", "pyop_triton.py"}) EXPECT_TRUE(fs::exists(work / "pyop" / f)) << f;
  EXPECT_FALSE(fs::exists(work / "pyop" / "CMakeLists.txt"));
  auto checked = backendbench({"check", work.string()});
  if (checked.out.find("cannot run on this machine") != std::string::npos) GTEST_SKIP() << "no Python bridge or no PyTorch";
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("pyop__pyop_torch: cpu; dtypes any; Python"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("no kernel was run"), std::string::npos) << checked.out;
  const auto logs = e2e::temp_dir("logs");
  auto run = backendbench({"--custom-ops-root", work.string(), "--correctness-only", "--log-dir", logs.string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(verdicts(r, "pyop__pyop_torch"), "PASS PASS PASS PASS PASS PASS ");  // correctness-only checks the performance cases too
  for (const auto& t : e2e::tests_of(r, "pyop__pyop_triton"))  // PASS where there is a GPU and Triton
    EXPECT_TRUE(t["verdict"] == "SKIPPED" || t["verdict"] == "PASS") << t.dump();
}

// A worker's user exists for what it runs (worker_home.hpp). With an empty environment (no USER,
// no HOME: cron, CI runners, containers), an implementation that asks for its user, its passwd
// entry and its home at import, and writes a cache there, runs. Its HOME is a folder of its own:
// with the host's HOME set, nothing is written there, and a worker of a user of its own cannot
// read it.
TEST(PythonImpl, AWorkersUserExistsForWhatItRuns) {
  const auto host_home = e2e::temp_dir("host_home");
  fs::permissions(host_home, fs::perms::owner_all);  // as a home is: its owner's alone
  for (const bool empty_env : {true, false}) {
    const auto logs = e2e::temp_dir(empty_env ? "logs_empty_env" : "logs_host_home");
    std::vector<std::string> argv{"/usr/bin/env", "-i", "BB_TEST_HOST_HOME=" + host_home.string()};
    if (!empty_env) argv.insert(argv.end(), {"HOME=" + host_home.string(), "USER=someone", "LOGNAME=someone", "PATH=/usr/bin:/bin"});
    argv.insert(argv.end(), {BB_BINARY, "--custom-ops-root", e2e::fixture_root("python_user"), "--log-dir", logs.string(),
                             "--correctness-only", "--test-timeout", "30", "--variants", "none"});
    // The interpreter whose packages hold PyTorch, named (the empty environment has no PATH to
    // find it by): a venv's, where the test's PATH leads to one that imports it.
    if (const auto python = python_on_path(); !python.empty() && e2e::run_program({python, "-c", "import torch"}).exit_code == 0)
      argv.insert(argv.end(), {"--python", python});
    auto run = e2e::run_program(argv);
    const auto r = e2e::read_json(logs / "results.json");
    // The empty environment keeps the run's interpreter warm for the next run, as a user's would
    // (docs/PYTHON.md); the test leaves none behind.
    const auto none = nlohmann::json::object();
    const auto kept = r.value("phases", none).value("python_interpreter", none).value("kept", none);
    if (const long pid = kept.value("pid", 0L); kept.value("started", false) && pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
    for (const auto& t : e2e::tests_of(r, "scale__scale_whoami")) {
      const std::string m = t.value("message", "");
      if (m.find("no Python bridge") != std::string::npos) GTEST_SKIP() << "built without python3-dev";
      if (m.find("No module named 'torch'") != std::string::npos) GTEST_SKIP() << "PyTorch is not importable (python3-torch)";
    }
    EXPECT_EQ(run.exit_code, 0) << (empty_env ? "env -i\n" : "HOME set\n") << run.out << run.err;
    EXPECT_EQ(verdicts(r, "scale__scale_whoami"), "PASS PASS PASS ") << first_message(r, "scale__scale_whoami") << "\n" << run.out;
    const auto tests = e2e::tests_of(r, "scale__scale_whoami");
    ASSERT_FALSE(tests.empty());
    const std::string seen = tests.front().value("output", "");
    EXPECT_NE(seen.find("whoami: "), std::string::npos) << seen;
    EXPECT_EQ(seen.find("home=" + host_home.string()), std::string::npos) << "the host's HOME is not the worker's: " << seen;
    // A user of its own where the host can give one: root, and the binary readable by others (a
    // build under a folder of mode 700, as mktemp -d makes, runs its workers as uid 0 without
    // capabilities: docs/RELIABILITY.md).
    const auto& sandbox = r["host"]["sandbox"];
    if (sandbox.value("own_user", false) && sandbox.value("namespaces", false) && others_can_reach(BB_BINARY)) {
      EXPECT_NE(seen.find("user=bbworker entry=bbworker"), std::string::npos) << seen;
      EXPECT_NE(seen.find("host_home_readable=False"), std::string::npos) << seen;
    }
  }
  // (The host's own library store is ~/.cache/backendbench: the host's, not a worker's.)
  EXPECT_FALSE(fs::exists(host_home / ".cache" / "scale_whoami")) << "a worker wrote into the host's HOME";
}

// Python workers are forked from one warm interpreter (python_zygote.hpp): PyTorch imported
// once, before any worker, then each worker a fork of it whose first prepare imports the file
// alone. The workers' own code is watched as a library worker's (worker_integrity.hpp: what the
// interpreter loaded is the plugin's side), so an honest implementation's clock audit holds
// (IsTimedAndScoredBesideALibrary). The run's phases say what starting cost.
TEST(PythonImpl, WorkersAreForkedFromOneWarmInterpreter) {
  const auto [run, r, trace] = traced_run({"--custom-ops-root", e2e::fixture_root("python"), "--impls", "scale_torch,scale_out", "--correctness-only"});
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(verdicts(r, "scale__scale_torch"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_out"), "PASS PASS PASS ");
  double import_s = 0;
  int interpreters = 0, forks = 0, failed_forks = 0;
  std::vector<double> loads;  // each Python implementation's first prepare: its file alone
  std::set<std::string> prepared;
  for (const auto& line : trace) {
    const std::string what = line.value("what", "");
    if (what == "warm_interpreter") ++interpreters;
    if (what == "warm_interpreter_ready") import_s = line.value("import_s", 0.0);
    if (what == "python_fork") (line.value("ok", false) ? forks : failed_forks) += 1;
    const std::string impl = line.value("impl", "");
    if (line.value("cmd", "") == "prepare" && line.value("side", "") == "impl" && impl.ends_with(".py") && prepared.insert(impl).second)
      loads.push_back(line["worker_steps"].value("load_s", 0.0));
  }
  EXPECT_EQ(interpreters, 1) << "one interpreter for the run";
  EXPECT_GT(import_s, 0.0) << "its imports, timed";
  EXPECT_GE(forks, 2) << "scale_torch's and scale_out's workers";
  EXPECT_EQ(failed_forks, 0);
  ASSERT_EQ(loads.size(), 2u);
  for (double load : loads) EXPECT_LT(load, import_s / 2) << "the file's import, PyTorch imported already (" << import_s << " s)";
  const auto& phase = r["phases"]["python_interpreter"];
  EXPECT_EQ(phase.value("forks", 0), forks) << phase.dump();
  EXPECT_NE(run.out.find("Python workers: PyTorch imported once"), std::string::npos) << run.out;
}

// Without the warm interpreter (it could not start, or BACKENDBENCH_COLD_PYTHON asks so), each
// Python worker starts cold and imports for itself: the same verdicts, and the run says why.
TEST(PythonImpl, WithoutTheWarmInterpreterWorkersStartColdWithTheSameVerdicts) {
  setenv("BACKENDBENCH_COLD_PYTHON", "1", 1);
  const auto [run, r, trace] = traced_run({"--custom-ops-root", e2e::fixture_root("python"), "--impls", "scale_torch,scale_wrong", "--correctness-only"});
  unsetenv("BACKENDBENCH_COLD_PYTHON");
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(verdicts(r, "scale__scale_torch"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_wrong"), "FAIL FAIL FAIL ");
  for (const auto& line : trace) EXPECT_NE(line.value("what", ""), "python_fork") << line.dump();
  EXPECT_EQ(r["phases"]["python_interpreter"].value("error", ""), "BACKENDBENCH_COLD_PYTHON is set") << r["phases"].dump();
  EXPECT_NE(run.out.find("Python workers started cold (BACKENDBENCH_COLD_PYTHON is set)"), std::string::npos) << run.out;
}

// An implementation that reaches for the interpreter its worker was forked from: a descriptor of
// it left open (a spawn request with no walls), its process (killed, or its memory written to
// poison every later worker), the packages it imports (written into). None is within reach: the
// interpreter's socket is closed in every child, its process is outside the worker's PID
// namespace and not dumpable, the Python package folders are read-only in a worker's view; the
// honest implementations forked after it pass, forked from it still.
TEST(PythonImpl, AWorkerCannotReachTheInterpreterItWasForkedFrom) {
  const auto [run, r, trace] = traced_run({"--custom-ops-root", e2e::fixture_root("python_interpreter"), "--correctness-only", "-j", "1"});
  if (auto why = python_unavailable(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto breach = e2e::tests_of(r, "scale__scale_breach");
  ASSERT_FALSE(breach.empty());
  const std::string seen = breach.front().value("output", "");
  ASSERT_NE(seen.find("breach: "), std::string::npos) << seen;
  EXPECT_EQ(seen.find("answered"), std::string::npos) << "a worker reached the interpreter's socket: " << seen;
  EXPECT_EQ(seen.find("OPENED"), std::string::npos) << "a worker opened the interpreter's memory: " << seen;
  EXPECT_EQ(seen.find("packages=WRITTEN"), std::string::npos) << "a worker wrote beside PyTorch's files: " << seen;
  EXPECT_EQ(seen.find("token READ"), std::string::npos) << "a worker read a kept interpreter's token: " << seen;
  // Its process is out of sight in the worker's PID namespace. (Without one, a worker run as uid
  // 0 without capabilities can kill it, as any process of its uid: the Python workers after it
  // then start cold. docs/RELIABILITY.md.)
  const auto& sandbox = r["host"]["sandbox"];
  if (sandbox.value("namespaces", false)) EXPECT_NE(seen.find("interpreter=not visible"), std::string::npos) << seen;
  EXPECT_EQ(verdicts(r, "scale__scale_out"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(r, "scale__scale_torch"), "PASS PASS PASS ");
  int forks = 0, failed_forks = 0;
  for (const auto& line : trace)
    if (line.value("what", "") == "python_fork") (line.value("ok", false) ? forks : failed_forks) += 1;
  EXPECT_GE(forks, 3) << "the three implementations' workers";
  EXPECT_EQ(failed_forks, 0) << "every Python worker forked from the interpreter, the ones after the breach among them";
}

// An interpreter kept warm between runs (python_kept_interpreter.hpp). The first run starts it
// and waits for its imports; the next runs of the same binary and environment are served by it,
// nothing imported on their wall, with the same verdicts (a worker's crash told through the pipe
// its server writes the wait status to). No worker reaches it: the breach fixture, run under it,
// finds neither its folder nor its token. What its imports rest on changed (a file written into
// a folder on PYTHONPATH), the next run starts a new one. Idle, it ends and takes its socket away.
TEST(PythonImpl, AnInterpreterKeptWarmServesTheNextRunsAndNoWorker) {
  const auto site = e2e::temp_dir("kept_site");
  const char* old_path = std::getenv("PYTHONPATH");
  const std::string saved_path = old_path ? old_path : "";
  setenv("PYTHONPATH", site.c_str(), 1);
  // Idle for a minute while the runs below share it (a loaded CI machine can take seconds
  // between two runs: an interpreter idle for only 5 s could end just as the third run asks).
  setenv("BACKENDBENCH_KEEP_WARM", "60", 1);
  struct Restore {
    bool had;
    std::string path;
    ~Restore() {
      setenv("BACKENDBENCH_KEEP_WARM", "0", 1);
      if (had) setenv("PYTHONPATH", path.c_str(), 1);
      else unsetenv("PYTHONPATH");
    }
  } restore{old_path != nullptr, saved_path};
  const std::vector<std::string> args{"--custom-ops-root", e2e::fixture_root("python"), "--impls", "scale_torch,scale_crash", "--correctness-only"};
  auto kept_of = [](const nlohmann::json& r) { return r["phases"]["python_interpreter"].value("kept", nlohmann::json::object()); };

  const auto first = traced_run(args);
  if (auto why = python_unavailable(first.results); !why.empty()) GTEST_SKIP() << why;
  const auto k1 = kept_of(first.results);
  if (k1.contains("error")) GTEST_SKIP() << "no interpreter kept here: " << k1.dump();
  EXPECT_TRUE(k1.value("started", false)) << k1.dump();
  EXPECT_EQ(k1.value("runs", -1), 0) << k1.dump();
  EXPECT_EQ(verdicts(first.results, "scale__scale_torch"), "PASS PASS PASS ");
  EXPECT_EQ(verdicts(first.results, "scale__scale_crash"), "CRASH CRASH CRASH ");
  EXPECT_NE(first.run.out.find("(kept warm for the next run)"), std::string::npos) << first.run.out;

  const auto second = traced_run(args);
  const auto k2 = kept_of(second.results);
  EXPECT_FALSE(k2.value("started", true)) << k2.dump();
  EXPECT_EQ(k2.value("runs", -1), 1) << k2.dump();
  EXPECT_EQ(k2.value("pid", -1), k1.value("pid", -2)) << "the same interpreter";
  // No import waited for: the second run's wait is a fork, against the import the first made
  // (its own wait for it can be short where the host planned while the interpreter imported).
  const double import_s = first.results["phases"]["python_interpreter"].value("import_s", 0.0);
  EXPECT_LT(k2.value("ready_wait_s", 99.0), 0.5 * import_s) << "no import waited for: import " << import_s << " s " << k1.dump() << k2.dump();
  EXPECT_EQ(verdicts(second.results, "scale__scale_torch"), "PASS PASS PASS ");
  for (const auto& t : e2e::tests_of(second.results, "scale__scale_crash")) {
    EXPECT_EQ(t["verdict"], "CRASH") << t.dump();
    EXPECT_NE(t.value("message", "").find("SIGSEGV"), std::string::npos) << "how it ended, from its server: " << t.dump();
  }
  EXPECT_NE(second.run.out.find("an interpreter kept warm from an earlier run"), std::string::npos) << second.run.out;

  const auto breach = traced_run({"--custom-ops-root", e2e::fixture_root("python_interpreter"), "--correctness-only", "-j", "1"});
  EXPECT_EQ(kept_of(breach.results).value("pid", -1), k1.value("pid", -2)) << kept_of(breach.results).dump();
  const auto b = e2e::tests_of(breach.results, "scale__scale_breach");
  ASSERT_FALSE(b.empty());
  const std::string seen = b.front().value("output", "");
  ASSERT_NE(seen.find("kept="), std::string::npos) << seen;
  EXPECT_EQ(seen.find("token READ"), std::string::npos) << "a worker read the kept interpreter's token: " << seen;
  EXPECT_EQ(seen.find("answered"), std::string::npos) << "a worker was answered: " << seen;
  EXPECT_EQ(verdicts(breach.results, "scale__scale_torch"), "PASS PASS PASS ");

  { std::ofstream(site / "installed.py") << "# a package installed after the interpreter imported\n"; }
  setenv("BACKENDBENCH_KEEP_WARM", "5", 1);  // the one the third run starts: idle 5 s
  const auto third = traced_run(args);
  const auto k3 = kept_of(third.results);
  EXPECT_TRUE(k3.value("started", false)) << k3.dump();
  EXPECT_NE(k3.value("replaced", "").find("changed"), std::string::npos) << k3.dump();
  EXPECT_NE(k3.value("pid", -1), k1.value("pid", -1)) << k3.dump();
  EXPECT_EQ(verdicts(third.results, "scale__scale_torch"), "PASS PASS PASS ");

  // Idle for its 5 s, it ends: its socket is gone.
  const fs::path socket = k3.value("socket", "");
  bool gone = false;
  for (int i = 0; i < 150 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = !fs::exists(socket);
  }
  EXPECT_TRUE(gone) << socket << " still there 15 s after its last run";
}

// The plan imports every Python file of the sweep at once, side by side (a kernel library can
// take seconds to import: op after op, a folder of four took 51 s to plan on the GPU machine).
// Three ops, each with an implementation that sleeps a second at import and says when: the three
// imports overlap. `check` plans as a run does.
TEST(PythonImpl, ThePlanImportsTheSweepsFilesSideBySide) {
  auto run = backendbench({"check", e2e::fixture_root("python_slow_imports")});
  std::vector<std::pair<double, double>> imports;
  for (std::size_t at = run.out.find("; version "); at != std::string::npos; at = run.out.find("; version ", at + 1)) {
    double began = 0, ended = 0;
    if (std::sscanf(run.out.c_str() + at, "; version %lf-%lf", &began, &ended) == 2) imports.emplace_back(began, ended);
  }
  if (imports.empty() && run.out.find("PyTorch") != std::string::npos) GTEST_SKIP() << "no PyTorch for Python implementations here";
  ASSERT_EQ(imports.size(), 3u) << run.out << run.err;
  double last_start = 0, first_end = 1e300;
  for (const auto& [began, ended] : imports) {
    EXPECT_GE(ended - began, 0.9);
    last_start = std::max(last_start, began);
    first_end = std::min(first_end, ended);
  }
  EXPECT_LT(last_start, first_end) << "the three imports did not overlap: one after another\n" << run.out;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// A kernel library (an installed package an implementation imports: Liger-Kernel's takes 14 s)
// is imported once, in a library interpreter forked from the warm one, for the files that import
// exactly that set of modules; their workers are forked from it. Attack first: scale_spread names
// the honest implementations' library and a package that marks every process it is imported in;
// were libraries shared by union, the honest scale_lib would find the mark and raise. A helper
// beside the files (utils.py) is the folder's, never taken for an installed package.
TEST(PythonImpl, AKernelLibraryIsImportedOnceForTheFilesThatNameItAndReachesNoOtherWorker) {
  const std::string site = e2e::fixture_root("python_library_site");
  const char* before = std::getenv("PYTHONPATH");
  const std::string saved = before ? before : "";
  setenv("PYTHONPATH", site.c_str(), 1);
  const auto [run, r, trace] = traced_run({"--custom-ops-root", e2e::fixture_root("python_library"), "--correctness-only"});
  if (before) setenv("PYTHONPATH", saved.c_str(), 1); else unsetenv("PYTHONPATH");
  if (auto why = python_unavailable(r, "scale__scale_plain"); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  for (const char* impl : {"scale__scale_lib", "scale__scale_lib2", "scale__scale_spread", "scale__scale_plain"})
    EXPECT_EQ(verdicts(r, impl), "PASS PASS PASS ") << impl << ": " << first_message(r, impl);
  const auto libraries = r["phases"]["python_interpreter"].value("libraries", nlohmann::json::array());
  ASSERT_EQ(libraries.size(), 2u) << r["phases"].dump();
  std::map<std::string, nlohmann::json> by_modules;
  for (const auto& l : libraries) by_modules[l["modules"].dump()] = l;
  const auto honest = by_modules["[\"bbfixture_slowlib\"]"];
  const auto spread = by_modules["[\"bbfixture_patcher\",\"bbfixture_slowlib\"]"];
  ASSERT_TRUE(honest.is_object()) << libraries.dump();
  ASSERT_TRUE(spread.is_object()) << libraries.dump();
  EXPECT_EQ(honest.value("files", 0), 2) << "scale_lib and scale_lib2 import the same";
  EXPECT_EQ(spread.value("files", 0), 1);
  // A worker asked for before its library's imports are done imports for itself (never waits):
  // the plan's survey takes longer than these imports, so the jobs' workers are forked from it.
  EXPECT_GE(honest.value("forks", 0), 1) << "the honest implementations' workers forked from it";
  EXPECT_GE(spread.value("forks", 0), 1);
  EXPECT_GT(honest.value("import_s", 0.0), 0.25) << "the library's import, done there";
  EXPECT_FALSE(honest.contains("error")) << honest.dump();
  EXPECT_EQ(libraries.dump().find("utils"), std::string::npos) << "the folder's own helper is no installed package";
}

// A run's plan reads each Python file's text and imports only the files whose text does not say
// for certain what they define: an implementation whose import takes three seconds (a kernel
// library's takes fifteen) costs the plan nothing; one whose import fails is each test's ERROR,
// with the traceback, from its worker; one that makes its function at import, decorates it, or
// changes its BACKENDBENCH_INFO after making it is imported to be surveyed. `check` still
// imports every file, and says which cannot be used.
TEST(PythonImpl, ARunsPlanReadsTheFilesTextAndImportsOnlyWhatItCannotRead) {
  const auto [run, r, trace] = traced_run({"--custom-ops-root", e2e::fixture_root("python_plan_reads"), "--correctness-only"});
  if (auto why = python_unavailable(r, "twice__twice_slow"); !why.empty()) GTEST_SKIP() << why;
  // twice_hip_later runs on none of the op's devices: unusable (exit 2), as `check` says too.
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_EQ(verdicts(r, "twice__twice_slow"), "PASS PASS ") << first_message(r, "twice__twice_slow");
  EXPECT_EQ(verdicts(r, "twice__twice_made"), "PASS PASS ") << first_message(r, "twice__twice_made");
  EXPECT_EQ(verdicts(r, "twice__twice_decorated"), "PASS PASS ") << first_message(r, "twice__twice_decorated");
  EXPECT_EQ(verdicts(r, "twice__twice_hip_later"), "") << "its info changed after it was made: HIP only";
  EXPECT_NE((run.out + run.err).find("twice_hip_later.py: declares devices hip;"), std::string::npos) << run.out << run.err;
  EXPECT_EQ(verdicts(r, "twice__twice_broken"), "ERROR ERROR ");
  const std::string broken = first_message(r, "twice__twice_broken");
  EXPECT_NE(broken.find("twice_broken: its kernel library is not installed"), std::string::npos) << broken;
  EXPECT_NE(broken.find("twice_broken.py\", line 8"), std::string::npos) << broken;
  // twice_made.py is imported (in a worker forked from the warm interpreter, once its imports
  // are done): the plan waits for that, never for twice_slow.py's three seconds.
  const double interpreter_s = r["phases"]["python_interpreter"].value("import_s", 0.0);
  EXPECT_LT(r["phases"].value("plan_s", 99.0), interpreter_s + 2.0) << "the plan waited for twice_slow.py's import\n" << r["phases"].dump();
  std::size_t read = 0, imported = 0;
  for (const auto& l : trace)
    if (l.value("what", "") == "python_read") {
      read += l.value("files", std::size_t{0});
      imported += l.value("to_import", std::size_t{0});
    }
  EXPECT_EQ(read, 6u) << "the reference and five implementations";
  EXPECT_EQ(imported, 3u) << "twice_made.py, twice_decorated.py and twice_hip_later.py";

  auto checked = backendbench({"check", e2e::fixture_root("python_plan_reads")});
  EXPECT_EQ(checked.exit_code, 2) << checked.out << checked.err;
  EXPECT_NE((checked.out + checked.err).find("twice_broken: its kernel library is not installed"), std::string::npos) << checked.out << checked.err;
}
