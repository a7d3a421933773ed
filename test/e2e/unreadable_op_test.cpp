// An op folder, or an op's manifest, that the user cannot read is that op's error (exit 2, the
// folder and the OS error named); the other ops still run and every report is written. It used
// to end the run with an uncaught std::filesystem exception (SIGABRT, only results.jsonl left).
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs backendbench with `args` unprivileged: when the test runs as root (root reads a folder
// whatever its mode), as uid 0 with every capability dropped for good (so a folder of mode 000
// is unreadable, while the binary stays reachable in a checkout of mode 0700, as CI's
// `mktemp -d` makes); else as this user. stdout and stderr go through files in `io`.
e2e::Run as_unprivileged(const std::vector<std::string>& args, const fs::path& io, double timeout_s = 120) {
  e2e::Run run;
  const bool root = getuid() == 0;
  std::vector<std::string> argv_s{BB_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto out = io / "stdout", err = io / "stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    if (root) {
      for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
      if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0) != 0) _exit(125);
      __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct data[2]{};
      if (syscall(SYS_capset, &header, data) != 0) _exit(125);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "backendbench did not finish in " << timeout_s << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = read_all(out);
  run.err = read_all(err);
  return run;
}

}  // namespace

TEST(UnreadableOp, IsThatOpsErrorAndTheOtherOpsStillRun) {
  // root/locked: an op folder of mode 000; root/noread: a folder whose gen_input.yaml has mode
  // 000; root/scale: a usable op. Everything else is readable by anyone.
  const auto root = e2e::temp_dir("root"), logs = e2e::temp_dir("logs"), io = e2e::temp_dir("io");
  const fs::path from = fs::path(e2e::fixture_root("hostile")) / "scale";
  fs::create_directories(root / "scale");
  for (const char* f : {"gen_input.yaml", "scale_reference.so", "scale_good.so"}) fs::copy_file(from / f, root / "scale" / f);
  std::string manifest = read_all(from / "gen_input.yaml");
  manifest.replace(manifest.find("op: scale\n"), 10, "");
  for (const char* op : {"locked", "noread"}) {
    fs::create_directories(root / op);
    std::ofstream(root / op / "gen_input.yaml") << manifest;
  }
  for (const auto& p : {root.parent_path(), root, root / "scale", root / "locked", root / "noread", logs, io})
    fs::permissions(p, fs::perms::all, fs::perm_options::replace);
  for (const auto& p : fs::recursive_directory_iterator(root))
    if (p.is_regular_file()) fs::permissions(p.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root / "noread" / "gen_input.yaml", fs::perms::none, fs::perm_options::replace);
  fs::permissions(root / "locked", fs::perms::none, fs::perm_options::replace);

  auto run = as_unprivileged({"--custom-ops-root", root.string(), "--log-dir", logs.string(), "--correctness-only"}, io);
  fs::permissions(root / "locked", fs::perms::owner_all, fs::perm_options::replace);  // so the next run can remove it
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find((root / "locked").string() + ": cannot read the op's folder: Permission denied"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find((root / "noread" / "gen_input.yaml").string() + ": cannot read the manifest: Permission denied"),
            std::string::npos)
      << run.err;

  // Every report is written; the two ops carry their errors, the usable one its results.
  for (const char* f : {"results.json", "results.jsonl", "junit.xml", "operator_summary.csv", "OVERALL_SUMMARY.md", "report.html"})
    EXPECT_TRUE(fs::exists(logs / f)) << f;
  const auto r = e2e::read_json(logs / "results.json");
  EXPECT_EQ(r["exit_code"], 2);
  std::map<std::string, nlohmann::json> ops;
  for (const auto& op : r["ops"]) ops[op["op"].get<std::string>()] = op;
  ASSERT_EQ(ops.size(), 3u) << r["ops"].dump();
  EXPECT_EQ(ops["locked"]["errors"].size(), 1u);
  EXPECT_EQ(ops["noread"]["errors"].size(), 1u);
  EXPECT_TRUE(ops["scale"]["errors"].empty());
  const auto good = e2e::tests_of(r, "scale__scale_good");
  ASSERT_EQ(good.size(), 3u);
  for (const auto& t : good) EXPECT_EQ(t["verdict"], "PASS") << t.dump();
}
