// A worker's home (worker_home.hpp): a private folder, the environment that names it, passwd and
// group entries for its user, and a removal that never follows a link the worker left.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run/workers/worker_home.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST(WorkerHome, IsAPrivateFolderNamedByTheEnvironment) {
  auto h = bb::WorkerHome::make(-1, false);
  ASSERT_TRUE(h) << h.error().message;
  struct stat st {};
  ASSERT_EQ(stat(h->home().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(h->mount_options().empty()) << "no view of its own: the folder is the home";
  EXPECT_TRUE(h->passwd_file().empty());
  std::string host_home = "HOME=/root/somewhere", user = "USER=someone", config = "XDG_CONFIG_HOME=/root/.config", keep = "KEEP=1";
  char* env[] = {host_home.data(), user.data(), config.data(), keep.data(), nullptr};
  const auto e = h->environment(env);
  auto has = [&](const std::string& s) { return std::find(e.begin(), e.end(), s) != e.end(); };
  EXPECT_TRUE(has("HOME=" + h->home()));
  EXPECT_TRUE(has("USER=" + h->user()));
  EXPECT_TRUE(has("LOGNAME=" + h->user()));
  EXPECT_TRUE(has("XDG_CACHE_HOME=" + h->home() + "/.cache"));
  EXPECT_TRUE(has("KEEP=1"));
  EXPECT_FALSE(has(host_home));
  EXPECT_FALSE(has(config)) << "the host's other XDG folders are not passed on";
  const std::string home = h->home();
  h->remove();
  EXPECT_FALSE(fs::exists(home));
}

TEST(WorkerHome, AUserOfItsOwnIsNamedInItsView) {
  if (geteuid() != 0) GTEST_SKIP() << "a home for another user is made by a root host only";
  auto h = bb::WorkerHome::make(0x60000123L, true);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->user(), bb::kWorkerUserName);
  EXPECT_NE(h->mount_options().find("uid=1610613027"), std::string::npos) << h->mount_options();
  EXPECT_NE(h->mount_options().find("mode=0700"), std::string::npos) << h->mount_options();
  std::stringstream passwd, group;
  passwd << std::ifstream(h->passwd_file()).rdbuf();
  group << std::ifstream(h->group_file()).rdbuf();
  EXPECT_NE(passwd.str().find("root:"), std::string::npos) << "the host's entries kept";
  EXPECT_NE(passwd.str().find(std::string(bb::kWorkerUserName) + ":x:1610613027:1610613027:"), std::string::npos) << passwd.str();
  EXPECT_NE(passwd.str().find(":" + h->home() + ":"), std::string::npos);
  EXPECT_NE(group.str().find(std::string(bb::kWorkerUserName) + ":x:1610613027:"), std::string::npos) << group.str();
  const std::string files[] = {h->passwd_file(), h->group_file(), h->home()};
  h->remove();
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f)) << f;
}

// A worker that leaves a link to a folder of the host's in its home (or swaps one in for a folder
// of its own while the host empties it) never gets the host, root perhaps, to delete through it.
TEST(WorkerHome, RemovalNeverFollowsALink) {
  const fs::path outside = scratch("bb_home_outside");
  std::ofstream(outside / "precious") << "keep";
  const fs::path home = scratch("bb_home_removed");
  fs::create_directories(home / "a" / "b");
  std::ofstream(home / "a" / "b" / "file") << "x";
  fs::create_directory_symlink(outside, home / "a" / "link_to_folder");
  fs::create_symlink(outside / "precious", home / "link_to_file");
  EXPECT_TRUE(bb::remove_tree(home.string()));
  EXPECT_FALSE(fs::exists(home));
  EXPECT_TRUE(fs::exists(outside / "precious")) << "deleted through a link";
  // The path itself a link: the link goes, not what it names.
  const fs::path link = fs::temp_directory_path() / "bb_home_link";
  fs::remove(link);
  fs::create_directory_symlink(outside, link);
  EXPECT_TRUE(bb::remove_tree(link.string()));
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(outside / "precious"));
  fs::remove_all(outside);
}
