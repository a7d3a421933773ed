#include "run/workers/landlock.hpp"

#include "run/workers/sandbox_off.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace bb {

#if defined(__linux__)

namespace {

// The uapi's numbers and rights (linux/landlock.h), spelled here: Debian 12's headers predate
// some of them, and the kernel tells which it has (its ABI version).
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr unsigned kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2, kReadDir = 1ULL << 3, kRemoveDir = 1ULL << 4,
                   kRemoveFile = 1ULL << 5, kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7, kMakeReg = 1ULL << 8, kMakeSock = 1ULL << 9,
                   kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11, kMakeSym = 1ULL << 12, kRefer = 1ULL << 13 /* ABI 2 */,
                   kTruncate = 1ULL << 14 /* ABI 3 */;
// Rights that apply to a file itself (a rule on a file may grant only these).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate;

struct RulesetAttr {
  uint64_t handled_access_fs;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

int probe_abi() {
  if (sandbox_part_off("landlock")) return 0;
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

// What this kernel can restrict (IOCTL_DEV, ABI 5, is left unhandled: the GPU's ioctls).
uint64_t handled(int abi) {
  uint64_t h = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock |
               kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) h |= kRefer;
  if (abi >= 3) h |= kTruncate;
  return h;
}

// Adds a rule granting `rights` beneath `path` (only its file rights where it is no folder); a
// path that does not exist is left out.
int allow(int ruleset, const char* path, uint64_t rights) {
  const int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : errno;
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return e;
  }
  PathBeneathAttr rule{S_ISDIR(st.st_mode) ? rights : rights & kFileRights, fd};
  const long rc = syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
  const int e = errno;
  close(fd);
  return rc == 0 ? 0 : e;
}

}  // namespace

int landlock_abi() {
  static const int abi = probe_abi();
  return abi;
}

bool landlock_supported() { return landlock_abi() > 0; }

const std::vector<std::string>& landlock_system_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> out;
    for (const char* d : {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev", "/run"})
      if (access(d, F_OK) == 0) out.emplace_back(d);
    return out;
  }();
  return dirs;
}

const std::vector<std::string>& landlock_extra_dirs(bool write) {
  static const auto parse = [](const char* var) {
    std::vector<std::string> out;
    std::error_code ec;
    const char* value = std::getenv(var);
    for (std::string_view rest = value ? value : ""; !rest.empty();) {
      const auto colon = rest.find(':');
      const std::filesystem::path dir{std::string(rest.substr(0, colon))};
      if (!dir.empty()) out.push_back(std::filesystem::absolute(dir, ec).string());
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    return out;
  };
  static const std::vector<std::string> read = parse("BACKENDBENCH_WORKER_READ"), written = parse("BACKENDBENCH_WORKER_WRITE");
  return write ? written : read;
}

int install_landlock_before_exec(const std::vector<const char*>& read, const std::vector<const char*>& write, const char** step) {
  const int abi = landlock_abi();
  if (abi <= 0) return 0;
  const uint64_t all = handled(abi);
  RulesetAttr attr{all};
  const long ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) {
    *step = "making the worker's filesystem view (landlock_create_ruleset)";
    return errno;
  }
  const int fd = static_cast<int>(ruleset);
  for (const char* path : read)
    if (int e = allow(fd, path, kReadFile | kReadDir | kExecute); e != 0) {
      close(fd);
      *step = "letting the worker read a folder (landlock_add_rule)";
      return e;
    }
  for (const char* path : write)
    if (int e = allow(fd, path, all); e != 0) {
      close(fd);
      *step = "letting the worker write a folder (landlock_add_rule)";
      return e;
    }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const long rc = syscall(SYS_landlock_restrict_self, fd, 0);
  const int e = errno;
  close(fd);
  if (rc != 0) {
    *step = "entering the worker's filesystem view (landlock_restrict_self)";
    return e;
  }
  return 0;
}

#else

int landlock_abi() { return 0; }
bool landlock_supported() { return false; }
const std::vector<std::string>& landlock_system_dirs() {
  static const std::vector<std::string> none;
  return none;
}
const std::vector<std::string>& landlock_extra_dirs(bool) {
  static const std::vector<std::string> none;
  return none;
}
int install_landlock_before_exec(const std::vector<const char*>&, const std::vector<const char*>&, const char**) { return 0; }

#endif

}  // namespace bb
