#include "measure/cpu_pin.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <system_error>

#if defined(__linux__)
#include <sched.h>
#include <time.h>
#include <unistd.h>
#endif

namespace bb {

std::vector<long> threads_of(long pid) {
  std::vector<long> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end; it.increment(ec)) {
    char* rest = nullptr;
    const std::string name = it->path().filename().string();
    const long tid = std::strtol(name.c_str(), &rest, 10);
    if (rest && *rest == '\0' && tid > 0) out.push_back(tid);
  }
  return out;
}

WorkerTasks process_tree(long pid) {
  WorkerTasks t;
  std::vector<long> todo{pid};
  while (!todo.empty() && t.processes.size() < 4096) {
    const long p = todo.back();
    todo.pop_back();
    t.processes.push_back(p);
    for (long tid : threads_of(p)) {
      t.threads.push_back(tid);
      std::ifstream children("/proc/" + std::to_string(p) + "/task/" + std::to_string(tid) + "/children");
      for (long c; children >> c;) todo.push_back(c);
    }
  }
  return t;
}

double cpu_seconds(const std::vector<long>& processes) {
#if defined(__linux__)
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (long pid : processes) {
    // The process's CPU-time clock: every thread's run time, ended ones included, in
    // nanoseconds (the scheduler's own account, not clock ticks).
    clockid_t clock;
    timespec t{};
    if (clock_getcpuclockid(static_cast<pid_t>(pid), &clock) == 0 && clock_gettime(clock, &t) == 0) {
      total += static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
      continue;
    }
    // Else its ticks (10 ms each): utime and stime, fields 14 and 15 after "(comm)", which may
    // hold spaces.
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string field;
    for (int k = 3; k <= 15 && fields >> field; ++k)
      if (k >= 14) total += std::strtod(field.c_str(), nullptr) / tick;
  }
  return total;
#else
  (void)processes;
  return 0;
#endif
}

bool pinned_to(const std::vector<long>& threads, int cpu) {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  for (long tid : threads) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0) {
      if (errno == ESRCH) continue;  // ended meanwhile
      return false;
    }
    if (CPU_COUNT(&set) != 1 || !CPU_ISSET(cpu, &set)) return false;
  }
  return true;
#else
  (void)threads;
  (void)cpu;
  return false;
#endif
}

int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

#if defined(__linux__)
namespace {
// Every CPU this process may use: the calling thread's set the first time here (the host pins
// none of its own threads).
const std::pair<bool, cpu_set_t>& every_cpu() {
  static const std::pair<bool, cpu_set_t> every = [] {
    std::pair<bool, cpu_set_t> e;
    CPU_ZERO(&e.second);
    e.first = sched_getaffinity(0, sizeof e.second, &e.second) == 0;
    return e;
  }();
  return every;
}
std::mutex g_claimed_mutex;
std::set<int> g_claimed;
}  // namespace
#endif

std::vector<int> core_siblings(int cpu, const std::filesystem::path& sys) {
  // "0,32", "0-1", "4": a list of CPUs and ranges.
  std::ifstream in(sys / ("cpu" + std::to_string(cpu)) / "topology" / "thread_siblings_list");
  std::string text;
  std::vector<int> out;
  if (in && std::getline(in, text)) {
    std::istringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
      char* rest = nullptr;
      const long first = std::strtol(item.c_str(), &rest, 10);
      if (rest == item.c_str() || first < 0) return {cpu};
      long last = first;
      if (*rest == '-') {
        const char* from = rest + 1;
        last = std::strtol(from, &rest, 10);
        if (rest == from || last < first || last - first > 4096) return {cpu};
      }
      while (*rest == ' ' || *rest == '\n') ++rest;
      if (*rest != '\0') return {cpu};
      for (long k = first; k <= last; ++k) out.push_back(static_cast<int>(k));
    }
  }
  if (std::find(out.begin(), out.end(), cpu) == out.end()) return {cpu};
  return out;
}

int choose_cpu(int preferred, const std::vector<int>& usable, const std::function<std::vector<int>(int)>& siblings,
               const std::set<int>& claimed) {
  auto is_usable = [&](int cpu) { return std::find(usable.begin(), usable.end(), cpu) != usable.end(); };
  auto free = [&](int cpu) { return is_usable(cpu) && !claimed.count(cpu); };
  auto whole_core_free = [&](int cpu) {
    if (!free(cpu)) return false;
    for (int s : siblings(cpu))
      if (claimed.count(s)) return false;
    return true;
  };
  if (whole_core_free(preferred)) return preferred;
  for (int cpu : usable)
    if (whole_core_free(cpu)) return cpu;
  if (free(preferred)) return preferred;
  for (int cpu : usable)
    if (free(cpu)) return cpu;
  return -1;
}

#if defined(__linux__)
namespace {
std::vector<int> usable_cpus() {
  const auto& every = every_cpu();
  std::vector<int> out;
  if (every.first)
    for (int k = 0; k < CPU_SETSIZE; ++k)
      if (CPU_ISSET(k, &every.second)) out.push_back(k);
  return out;
}
}  // namespace
#endif

int usable_physical_cores() {
#if defined(__linux__)
  std::set<int> seen;
  int cores = 0;
  for (int cpu : usable_cpus()) {
    if (seen.count(cpu)) continue;
    ++cores;
    for (int s : core_siblings(cpu)) seen.insert(s);
  }
  return std::max(1, cores);
#else
  return 1;
#endif
}

int claim_cpu(int preferred) {
#if defined(__linux__)
  static const std::vector<int> usable = usable_cpus();
  static std::map<int, std::vector<int>> siblings = [] {
    std::map<int, std::vector<int>> m;
    for (int cpu : usable) m[cpu] = core_siblings(cpu);
    return m;
  }();
  std::lock_guard<std::mutex> lock(g_claimed_mutex);
  const int cpu = choose_cpu(preferred, usable, [&](int c) { const auto it = siblings.find(c); return it == siblings.end() ? std::vector<int>{c} : it->second; },
                             g_claimed);
  if (cpu >= 0) g_claimed.insert(cpu);
  return cpu;
#else
  (void)preferred;
  return -1;
#endif
}

void release_cpu(int cpu) {
#if defined(__linux__)
  std::lock_guard<std::mutex> lock(g_claimed_mutex);
  g_claimed.erase(cpu);
#else
  (void)cpu;
#endif
}

bool pin_threads(const std::vector<long>& threads, int cpu) {
#if defined(__linux__)
  const auto& every = every_cpu();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) {
    if (cpu >= CPU_SETSIZE) return false;
    CPU_SET(cpu, &set);
  } else if (every.first) {
    set = every.second;
  } else {
    return false;
  }
  bool ok = true;
  for (long tid : threads)
    if (sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0 && errno != ESRCH) ok = false;
  return ok;
#else
  (void)threads;
  (void)cpu;
  return false;
#endif
}

}  // namespace bb
