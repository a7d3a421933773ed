// The user a worker runs as, made real for what it runs (Linux). A worker behind walls runs as
// a user of its own (sandbox.hpp), an unused uid that no passwd file names: real Python packages
// ask for their user at import (transformers calls getpass.getuser(), which fails with
// "getpwuid(): uid not found" where USER and LOGNAME are unset, as under cron, CI runners and
// containers) and cache under HOME (Triton, PyTorch). So each worker gets:
//   - a private HOME, never the host's: where the worker has a mount namespace, a tmpfs of its
//     own mounted there in its view (mode 0700, owned by its user; gone with the namespace, the
//     folder on the host's disk stays empty); elsewhere a fresh folder owned by its user. The
//     folder is removed when the worker ends, without following a link the worker left in it
//     (a host running as root never deletes through one);
//   - USER, LOGNAME, HOME, TMPDIR (in its HOME) and XDG_CACHE_HOME in its environment, whatever the host's (an empty
//     environment included); the host's other XDG folders are not passed on;
//   - where it has a mount namespace and a user of its own: /etc/passwd and /etc/group as the
//     host's, plus an entry for its uid and group (bound over them in its view only).
#pragma once

#include <string>
#include <vector>

#include "expected.hpp"

namespace bb {

class WorkerHome {
 public:
  WorkerHome() = default;
  ~WorkerHome();
  WorkerHome(WorkerHome&&) noexcept;
  WorkerHome& operator=(WorkerHome&&) noexcept;
  WorkerHome(const WorkerHome&) = delete;
  WorkerHome& operator=(const WorkerHome&) = delete;

  // A home for user `uid` (the host's own user where uid < 0). With `view` (the worker has a
  // mount namespace): mounted as a tmpfs in it (mount_options()), and passwd and group files that
  // name the user, where it has one of its own. Made by the host, before the worker starts.
  static Expected<WorkerHome> make(long uid, bool view);

  const std::string& home() const { return home_; }
  // Its TMPDIR, in its home (made there: by the host, or in its view once the tmpfs is mounted).
  std::string tmp() const { return home_.empty() ? std::string() : home_ + "/tmp"; }
  const std::string& user() const { return user_; }
  const std::string& passwd_file() const { return passwd_; }  // "" when none
  const std::string& group_file() const { return group_; }
  // The tmpfs's options for the worker's view ("" : the folder itself is the home).
  const std::string& mount_options() const { return mount_options_; }
  // `host_env` with HOME, USER, LOGNAME, TMPDIR and XDG_CACHE_HOME set to this worker's (and the
  // host's other XDG_*_HOME, XDG_RUNTIME_DIR and Python scratch left out), as NAME=value strings.
  std::vector<std::string> environment(char** host_env) const;
  // Removes the home and the files (the worker has ended).
  void remove();

 private:
  std::string home_, user_, passwd_, group_, mount_options_;
};

// Removes `path` and, if it is a folder, everything in it, never following a symbolic link
// (each step relative to a descriptor opened with O_NOFOLLOW: a link swapped in for a folder
// while it runs is removed as a link). False if anything was left.
bool remove_tree(const std::string& path);

// The name a worker's user goes by in its passwd entry and its environment.
inline constexpr const char* kWorkerUserName = "bbworker";

}  // namespace bb
