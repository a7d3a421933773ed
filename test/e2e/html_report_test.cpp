// report.html of a run with failures, opened in headless Chromium: the DOM after the page's
// script ran lists the failures before the passes and holds the speedup chart; a screenshot is
// taken. Chromium runs in a process group of its own and is killed with it, after a timeout too.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr double kChromiumTimeout = 60;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Processes of process group `pgid` that are not zombies, from /proc.
int live_in_group(pid_t pgid) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid && state != 'Z') ++n;
  }
  closedir(d);
  return n;
}

struct Browser {
  int exit_code = -1;
  bool timed_out = false;
  std::string out;  // stdout: the DOM with --dump-dom
  int left_behind = 0;
};

// Runs Chromium headless on `file` with `extra` flags and a fresh profile; whatever it started is
// killed when it ends or after kChromiumTimeout.
Browser chromium(const fs::path& file, const std::vector<std::string>& extra, const fs::path& profile) {
  Browser b;
  std::vector<std::string> args = {kChromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("file://" + fs::absolute(file).string());
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return b;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], STDOUT_FILENO);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);  // D-Bus complaints and the like
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kChromium, argv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first
  close(out_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kChromiumTimeout);
  pollfd fd = {out_pipe[0], POLLIN, 0};
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) {
      b.timed_out = true;
      break;
    }
    if (poll(&fd, 1, 200) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    b.out.append(buf, static_cast<size_t>(n));
  }
  close(out_pipe[0]);
  if (b.timed_out) kill(-pid, SIGKILL);
  int status = 0;
  // stdout closed: Chromium is ending; give it the rest of the time to exit.
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      b.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  b.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  kill(-pid, SIGKILL);  // its helpers (zygote, renderer, GPU process) if any outlived it
  for (int i = 0; i < 100 && (b.left_behind = live_in_group(pid)) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return b;
}

TEST(HtmlReport, ChromiumRendersFailuresFirstAndTheSpeedupChart) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << kChromium << " is not installed (Debian package chromium): the page was not rendered";
  const auto dir = e2e::temp_dir("html");
  // The hostile fixtures that end quickly (no hang), timed briefly so the charts have bars.
  const auto run = e2e::backendbench({"--custom-ops-root", e2e::fixture_root("hostile"), "--impls",
                                      "scale_good,scale_nondet,scale_wrong,scale_segfault,scale_unwritten,scale_error,scale_mutate,scale_overflow",
                                      "--min-time", "0.01", "--timeout", "0.3", "-q", "--log-dir", (dir / "logs").string()});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto html_file = dir / "logs" / "report.html";
  ASSERT_TRUE(fs::exists(html_file)) << run.out << run.err;

  // The DOM after the page's script ran.
  const auto dom = chromium(html_file, {"--dump-dom"}, dir / "profile-dom");
  ASSERT_FALSE(dom.timed_out) << "chromium --dump-dom did not finish in " << kChromiumTimeout << " s";
  EXPECT_EQ(dom.exit_code, 0);
  EXPECT_EQ(dom.left_behind, 0) << "chromium processes left behind";
  const std::string& d = dom.out;
  ASSERT_NE(d.find("</html>"), std::string::npos) << d.substr(0, 500);
  EXPECT_NE(d.find("18 of 24 tests failing"), std::string::npos);
  // Failures first: every failing implementation and its verdict appear in the failures
  // section, before the first passing test.
  const auto failures = d.find("id=\"failures\""), first_pass = d.find("data-verdict=\"PASS\"");
  const auto speedup = d.find("<svg id=\"speedup-chart\"");
  ASSERT_NE(failures, std::string::npos);
  ASSERT_NE(first_pass, std::string::npos);
  ASSERT_NE(speedup, std::string::npos);
  EXPECT_LT(failures, speedup);
  EXPECT_LT(speedup, first_pass);
  for (const char* s : {"scale__scale_wrong", "scale__scale_segfault", "scale__scale_unwritten", "scale__scale_error", "scale__scale_mutate",
                        "scale__scale_overflow", ">FAIL<", ">CRASH<", ">UNWRITTEN<", ">ERROR<", ">INPUT_MUTATED<", ">OUT_OF_BOUNDS<"}) {
    const auto at = d.find(s, failures);
    EXPECT_LT(at, speedup) << s << " is not in the failures section";
  }
  EXPECT_GT(d.find("scale__scale_good", failures), speedup);  // not a failure: it first appears in the chart
  // The chart: bars for the two correct implementations, the failed ones marked failed.
  EXPECT_NE(d.find("<title>scale__scale_good: "), std::string::npos);
  EXPECT_NE(d.find("✗ failed (CRASH=3)"), std::string::npos);
  EXPECT_EQ(d.find("<title>scale__scale_wrong: "), std::string::npos);
  EXPECT_NE(d.find("<svg id=\"timing-chart\""), std::string::npos);
  // The filter script ran: it counts the rows shown.
  EXPECT_NE(d.find("24 shown"), std::string::npos);

  // The screenshot.
  const auto png = dir / "report.png";
  const auto shot = chromium(html_file, {"--screenshot=" + png.string(), "--window-size=1280,2000", "--hide-scrollbars"}, dir / "profile-shot");
  ASSERT_FALSE(shot.timed_out) << "chromium --screenshot did not finish in " << kChromiumTimeout << " s";
  EXPECT_EQ(shot.left_behind, 0) << "chromium processes left behind";
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 30u * 1024);  // a rendered page, not a blank one
  EXPECT_EQ(read(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}


// As a person sees it: in a real browser no chart label or value is cut off, however long the
// implementation's name; failures are grouped by implementation with counts; a run where most
// tests were skipped does not say "all passed"; a spread that is not to be trusted is marked.
TEST(HtmlReport, ChromiumShowsWholeLabelsGroupedFailuresAndAnHonestHeadline) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << kChromium << " is not installed (Debian package chromium): the page was not rendered";
  const auto dir = e2e::temp_dir("html");
  const fs::path root = dir / "root", op = root / "scale";
  fs::create_directories(op);
  const fs::path hostile = fs::path(e2e::fixture_root("hostile")) / "scale";
  fs::copy_file(hostile / "gen_input.yaml", op / "gen_input.yaml");
  fs::copy_file(hostile / "scale_reference.so", op / "scale_reference.so");
  const std::string long_name = "scale_a_rather_long_implementation_name_as_real_kernels_get_v7";
  fs::copy_file(hostile / "scale_good.so", op / (long_name + ".so"));
  fs::copy_file(hostile / "scale_wrong.so", op / "scale_wrong.so");
  fs::copy_file(hostile / "scale_error.so", op / "scale_error.so");
  const auto run = e2e::backendbench({"--custom-ops-root", root.string(), "--min-time", "0.01", "--timeout", "0.02", "--max-samples", "5",
                                      "-q", "--log-dir", (dir / "logs").string()});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  // The page, with a script of the test's that measures every text of every chart against its
  // chart's box after layout, and writes the count of those that stick out into the DOM.
  std::ifstream in(dir / "logs" / "report.html");
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string probe =
      "<script>(function(){var n=0,t=0,w=[];document.querySelectorAll('svg').forEach(function(svg){var vb=svg.viewBox.baseVal;"
      "svg.querySelectorAll('text').forEach(function(e){var b=e.getBBox();t++;if(b.x<vb.x-0.5||b.x+b.width>vb.x+vb.width+0.5){n++;"
      "w.push(e.textContent);}});});document.body.setAttribute('data-texts',t);document.body.setAttribute('data-clipped',n);"
      "document.body.setAttribute('data-clipped-texts',w.join('|'));})();</script></body>";
  page.replace(page.rfind("</body>"), 7, probe);
  std::ofstream(dir / "measured.html") << page;
  const auto dom = chromium(dir / "measured.html", {"--dump-dom"}, dir / "profile");
  ASSERT_FALSE(dom.timed_out);
  const std::string& d = dom.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d, m, std::regex("data-texts=\"([0-9]+)\""))) << d.substr(0, 2000);
  EXPECT_GT(std::stoi(m[1]), 10);
  EXPECT_NE(d.find("data-clipped=\"0\""), std::string::npos) << "labels cut off: " << d.substr(d.find("data-clipped-texts"), 500);
  EXPECT_NE(d.find(">scale__" + long_name + "</text>"), std::string::npos) << "the long name is drawn whole";
  // Failures by implementation, with counts.
  const auto by_impl = d.find("<table class=\"by-impl\">");
  ASSERT_NE(by_impl, std::string::npos);
  EXPECT_TRUE(std::regex_search(d.substr(by_impl, 3000), std::regex("scale__scale_wrong</td><td class=\"num\">3 of 3</td><td><span class=\"badge fail\">FAIL 3</span>")))
      << d.substr(by_impl, 3000);
  EXPECT_NE(d.find("scale__scale_error</td><td class=\"num\">3 of 3</td>", by_impl), std::string::npos);
  // Timed briefly on purpose: its spreads are marked as not to be trusted.
  EXPECT_NE(d.find("of these spreads are not to be trusted"), std::string::npos);
  EXPECT_NE(d.find("class=\"box untrusted\""), std::string::npos);
}
}  // namespace
