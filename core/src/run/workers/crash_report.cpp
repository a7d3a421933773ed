#include "run/workers/crash_report.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "run/workers/landlock.hpp"
#include "run/workers/sandbox.hpp"
#include "run/workers/syscall_filter.hpp"

namespace bb {

namespace {

constexpr const char* kCrashLine = "backendbench-crash ";
constexpr const char* kFrameLine = "backendbench-frame ";

uint64_t hex_of(const std::string& s) {
  try {
    return std::stoull(s, nullptr, 16);
  } catch (...) {
    return 0;
  }
}

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// addr2line's output for `offsets` in `module`, two lines an address ("function", "file:line"),
// or "" where it could not run. In a child: a process group of its own, limits, Landlock
// read-only to the system's trees and the module's folder, the system call filter, and, on a
// root host, a user of its own.
std::string run_addr2line(const std::string& module, const std::vector<uint64_t>& offsets, double timeout_s) {
  static const char* const kTool = "/usr/bin/addr2line";
  if (access(kTool, X_OK) != 0 || offsets.empty()) return "";
  std::vector<std::string> args = {kTool, "-f", "-C", "-e", module};
  for (uint64_t o : offsets) args.push_back(fmt::format("0x{:x}", o));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> readable = landlock_system_dirs();
  readable.push_back(std::filesystem::path(module).parent_path().string());
  std::vector<const char*> read_c;
  for (const auto& r : readable) read_c.push_back(r.c_str());
  const std::vector<const char*> write_c;
  prepare_syscall_filter();
  // A user of its own where others can read the module (as a worker's walls do); else the host's, still walled.
  const bool root = geteuid() == 0 && others_can_reach(module);
  const auto uid = static_cast<uid_t>(root ? next_worker_uid() : 0);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  const pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return "";
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, STDIN_FILENO), dup2(null, STDERR_FILENO);
    close_range(3, ~0U, 0);
    const rlimit cpu{5, 5}, memory{1ULL << 30, 1ULL << 30};
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_AS, &memory);
    const char* step = nullptr;
    if (root && (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)) _exit(126);
    if (landlock_supported() && install_landlock_before_exec(read_c, write_c, &step) != 0) _exit(126);
    if (syscall_filter_supported() && install_syscall_filter_before_exec(&step) != 0) _exit(126);
    execve(kTool, argv.data(), environ);
    _exit(127);
  }
  close(out[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  while (text.size() < (1u << 20)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return text;
}

}  // namespace

std::string CrashFrame::where() const {
  std::string s = function.empty() ? fmt::format("0x{:x}", pc) : function;
  if (!file.empty()) s += fmt::format(" at {}:{}", base_name(file), line);
  if (!module.empty()) s += fmt::format(" ({}+0x{:x})", base_name(module), offset);
  return s;
}

const CrashFrame* CrashReport::first_in(const std::set<std::string>& modules) const {
  for (const auto& f : frames)
    if (modules.count(f.module)) return &f;
  return frames.empty() ? nullptr : &frames.front();
}

nlohmann::json CrashReport::to_json() const {
  nlohmann::json frames_json = nlohmann::json::array();
  for (const auto& f : frames) {
    nlohmann::json j{{"pc", fmt::format("0x{:x}", f.pc)}};
    if (!f.module.empty()) j["module"] = f.module, j["offset"] = fmt::format("0x{:x}", f.offset);
    if (!f.function.empty()) j["function"] = f.function;
    if (!f.file.empty()) j["file"] = f.file, j["line"] = f.line;
    frames_json.push_back(std::move(j));
  }
  nlohmann::json j{{"signal", signal}, {"frames", frames_json}};
  if (sent) j["sent"] = true;
  else j["address"] = fmt::format("0x{:x}", address);
  return j;
}

std::optional<CrashReport> take_crash_report(std::string& output) {
  std::optional<CrashReport> report;
  std::string kept;
  std::istringstream in(output);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    if (line.rfind(kCrashLine, 0) == 0) {
      any = true;
      report = CrashReport{};
      std::istringstream f(line.substr(std::strlen(kCrashLine)));
      std::string addr;
      f >> report->signal >> addr;
      if (addr.rfind("addr=", 0) == 0) report->address = hex_of(addr.substr(5));
      report->sent = addr == "sent";
      continue;
    }
    if (line.rfind(kFrameLine, 0) == 0) {
      any = true;
      if (!report || report->frames.size() >= 64) continue;
      std::istringstream f(line.substr(std::strlen(kFrameLine)));
      std::string pc, offset;
      CrashFrame frame;
      f >> pc >> offset;
      std::getline(f >> std::ws, frame.module);
      frame.pc = hex_of(pc);
      frame.offset = hex_of(offset);
      report->frames.push_back(std::move(frame));
      continue;
    }
    kept += line;
    kept += '\n';
  }
  if (any) {
    if (!output.empty() && output.back() != '\n' && !kept.empty()) kept.pop_back();
    output = std::move(kept);
  }
  return report;
}

void symbolise(CrashReport& report, const std::set<std::string>& modules, double timeout_s) {
  std::map<std::string, std::vector<std::size_t>> by_module;
  for (std::size_t i = 0; i < report.frames.size(); ++i)
    if (modules.count(report.frames[i].module)) by_module[report.frames[i].module].push_back(i);
  for (const auto& [module, indices] : by_module) {
    // A caller's frame is a return address: the call is the instruction before it.
    std::vector<uint64_t> offsets;
    for (std::size_t i : indices) offsets.push_back(report.frames[i].offset - (i > 0 && report.frames[i].offset > 0 ? 1 : 0));
    std::istringstream out(run_addr2line(module, offsets, timeout_s));
    for (std::size_t i : indices) {
      std::string function, place;
      if (!std::getline(out, function) || !std::getline(out, place)) break;
      if (const auto note = place.find(" ("); note != std::string::npos) place.resize(note);  // "(discriminator 1)"
      auto& f = report.frames[i];
      if (function != "??") f.function = function;
      const auto colon = place.rfind(':');
      if (colon != std::string::npos && place.compare(0, 2, "??") != 0) {
        f.file = place.substr(0, colon);
        try {
          f.line = std::stoi(place.substr(colon + 1));
        } catch (...) {
          f.line = 0;
        }
        if (f.line == 0) f.file.clear();
      }
    }
  }
}

}  // namespace bb
