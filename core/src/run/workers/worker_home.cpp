#include "run/workers/worker_home.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace bb {

namespace {

namespace fs = std::filesystem;

// The run's folder of worker homes, made once: <tmp>/backendbench-<pid>, searchable by every
// worker (0711) and listable by none; removed with what is left in it when the host exits.
struct HomesRoot {
  std::string path;
  std::string error;
  HomesRoot() {
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    path = ((ec ? fs::path("/tmp") : tmp) / fmt::format("backendbench-{}", getpid())).string();
    remove_stale(path);
    if (mkdir(path.c_str(), 0711) != 0 && errno != EEXIST) error = fmt::format("{}: {}", path, std::strerror(errno));
    else chmod(path.c_str(), 0711);
  }
  // What hosts no longer running left beside it (killed before their exit removed it).
  static void remove_stale(const fs::path& ours) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(ours.parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("backendbench-", 0) != 0 || name.size() == 13 || name.find_first_not_of("0123456789", 13) != std::string::npos) continue;
      const long pid = std::atol(name.c_str() + 13);
      if (e.path() == ours || pid <= 0 || (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
      struct stat st {};
      if (lstat(e.path().c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid()) remove_tree(e.path().string());
    }
  }
  ~HomesRoot() { remove_tree(path); }
};
HomesRoot& homes_root() {
  static HomesRoot root;
  return root;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out) && chmod(path.c_str(), 0644) == 0;
}

std::string host_user_name() {
  struct passwd pw {}, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_name) return found->pw_name;
  return kWorkerUserName;
}

}  // namespace

WorkerHome::~WorkerHome() { remove(); }

WorkerHome::WorkerHome(WorkerHome&& o) noexcept { *this = std::move(o); }

WorkerHome& WorkerHome::operator=(WorkerHome&& o) noexcept {
  if (this != &o) {
    remove();
    home_ = std::exchange(o.home_, {});
    user_ = std::exchange(o.user_, {});
    passwd_ = std::exchange(o.passwd_, {});
    group_ = std::exchange(o.group_, {});
    mount_options_ = std::exchange(o.mount_options_, {});
  }
  return *this;
}

Expected<WorkerHome> WorkerHome::make(long uid, bool view) {
  static std::atomic<unsigned> counter{0};
  const HomesRoot& root = homes_root();
  if (!root.error.empty()) return make_error("a folder for the workers' homes: " + root.error);
  WorkerHome h;
  const unsigned n = counter++;
  h.user_ = uid >= 0 ? kWorkerUserName : host_user_name();
  h.home_ = fmt::format("{}/home-{}", root.path, n);
  if (mkdir(h.home_.c_str(), 0700) != 0) {
    const std::string why = std::strerror(errno);
    h.home_.clear();
    return make_error(fmt::format("a worker's home {}/home-{}: {}", root.path, n, why));
  }
  if (view) {
    // Its own tmpfs in its view; the folder here only the place it is mounted on.
    const long owner = uid >= 0 ? uid : static_cast<long>(geteuid());
    h.mount_options_ = fmt::format("mode=0700,uid={},gid={},size=4g", owner, uid >= 0 ? uid : static_cast<long>(getegid()));
  } else {
    if (mkdir(h.tmp().c_str(), 0700) != 0)
      return make_error(fmt::format("a worker's TMPDIR {}: {}", h.tmp(), std::strerror(errno)));
    for (const std::string& dir : {h.home_, h.tmp()})
      if (uid >= 0 && chown(dir.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(uid)) != 0)
        return make_error(fmt::format("giving the worker's home {} to uid {}: {}", dir, uid, std::strerror(errno)));
  }
  if (uid >= 0 && view) {
    // The host's entries first (root, the device nodes' groups), then the worker's own.
    h.passwd_ = fmt::format("{}/passwd-{}", root.path, n);
    h.group_ = fmt::format("{}/group-{}", root.path, n);
    const std::string passwd = read_text("/etc/passwd") +
                               fmt::format("{}:x:{}:{}:backendbench worker:{}:/usr/sbin/nologin\n", kWorkerUserName, uid, uid, h.home_);
    const std::string group = read_text("/etc/group") + fmt::format("{}:x:{}:\n", kWorkerUserName, uid);
    if (!write_text(h.passwd_, passwd) || !write_text(h.group_, group))
      return make_error(fmt::format("the passwd and group files of a worker under {}: {}", root.path, std::strerror(errno)));
  }
  return h;
}

std::vector<std::string> WorkerHome::environment(char** host_env) const {
  std::vector<std::string> env;
  auto named = [](const char* e, const char* name) {
    const std::size_t n = std::strlen(name);
    return std::strncmp(e, name, n) == 0 && e[n] == '=';
  };
  for (char** e = host_env; e && *e; ++e) {
    bool replaced = false;
    // (The host's shared Python scratch too: a worker's Triton cache goes in its TMPDIR.)
    for (const char* name : {"HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
                             "BACKENDBENCH_PYTHON_SCRATCH"})
      replaced = replaced || named(*e, name);
    if (!replaced) env.emplace_back(*e);
  }
  env.push_back("HOME=" + home_);
  env.push_back("USER=" + user_);
  env.push_back("LOGNAME=" + user_);
  env.push_back("XDG_CACHE_HOME=" + home_ + "/.cache");
  env.push_back("TMPDIR=" + tmp());
  return env;
}

void WorkerHome::remove() {
  if (!home_.empty()) remove_tree(home_);
  for (const std::string* f : {&passwd_, &group_})
    if (!f->empty()) unlink(f->c_str());
  home_.clear();
  passwd_.clear();
  group_.clear();
  mount_options_.clear();
}

namespace {
// Empties the folder open as `dir` (taken), never following a link.
bool empty_folder(int dir) {
  DIR* d = fdopendir(dir);
  if (!d) {
    close(dir);
    return false;
  }
  bool ok = true;
  while (dirent* e = readdir(d)) {
    const char* name = e->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    const int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub >= 0) {  // a folder, opened as itself: emptied through its descriptor, then removed
      ok = empty_folder(sub) && ok;
      ok = (unlinkat(dirfd(d), name, AT_REMOVEDIR) == 0 || errno == ENOENT) && ok;
    } else {  // a file, a link (never followed), or gone
      ok = (unlinkat(dirfd(d), name, 0) == 0 || errno == ENOENT) && ok;
    }
  }
  closedir(d);
  return ok;
}
}  // namespace

bool remove_tree(const std::string& path) {
  const int dir = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return unlink(path.c_str()) == 0 || errno == ENOENT;
  const bool emptied = empty_folder(dir);
  return (rmdir(path.c_str()) == 0 || errno == ENOENT) && emptied;
}

}  // namespace bb
