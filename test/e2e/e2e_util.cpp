#include "e2e_util.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

namespace e2e {

namespace {
// Value variants multiply every correctness case by six: the tests of other features run without
// them (BACKENDBENCH_VARIANTS, inherited by every run the tests start); those of the variants
// say `--variants` (value_variants_test.cpp).
const int kNoVariants = setenv("BACKENDBENCH_VARIANTS", "none", 0);
}  // namespace

Run backendbench(const std::vector<std::string>& args, double timeout_s) {
  std::vector<std::string> argv{BB_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, timeout_s);
}

Run run_program(const std::vector<std::string>& args, double timeout_s) {
  Run run;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return run;
  // No interpreter kept warm past a test (python_kept_interpreter.hpp) unless the test asks.
  setenv("BACKENDBENCH_KEEP_WARM", "0", 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      ADD_FAILURE() << args.front() << " did not finish in " << timeout_s << " s";
      break;
    }
    if (poll(fds, 2, 200) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? run.out : run.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() / "bb_e2e" /
                   (std::string(info->test_suite_name()) + "." + info->name()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    ADD_FAILURE() << "cannot read " << file;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(in);
}

std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::vector<nlohmann::json> tests_of(const nlohmann::json& results, const std::string& impl) {
  std::vector<nlohmann::json> out;
  for (const auto& t : results.value("tests", nlohmann::json::array()))
    if (t.value("impl", "") == impl) out.push_back(t);
  return out;
}

std::string fixture_root(const std::string& name) { return std::string(BB_FIXTURE_ROOTS) + "/" + name; }

}  // namespace e2e
