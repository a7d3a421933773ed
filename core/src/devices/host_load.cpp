#include "devices/host_load.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace bb {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string read_small(const std::string& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines nvidia-smi prints for `args`, or none where it is missing or fails (a machine with
// no NVIDIA driver).
std::vector<std::string> nvidia_smi(const std::string& args) {
  std::vector<std::string> lines;
  if (access("/usr/bin/nvidia-smi", X_OK) != 0 && access("/usr/local/bin/nvidia-smi", X_OK) != 0) return lines;
  FILE* p = popen(("nvidia-smi " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return lines;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string l(buf);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    if (!l.empty()) lines.push_back(l);
  }
  if (pclose(p) != 0) lines.clear();
  return lines;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string f; std::getline(s, f, ',');) {
    const auto a = f.find_first_not_of(' '), b = f.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? "" : f.substr(a, b - a + 1));
  }
  return out;
}

// The GPUs' clocks, and the processes computing on them.
nlohmann::json describe_gpus() {
  nlohmann::json gpus = nlohmann::json::array(), apps = nlohmann::json::array();
  for (const auto& l : nvidia_smi("--query-gpu=index,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader,nounits")) {
    const auto f = split_csv(l);
    if (f.size() < 5) continue;
    gpus.push_back({{"index", f[0]}, {"sm_clock_mhz", f[1]}, {"max_sm_clock_mhz", f[2]}, {"temperature_c", f[3]}, {"utilization_pct", f[4]}});
  }
  for (const auto& l : nvidia_smi("--query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits")) {
    const auto f = split_csv(l);
    if (f.size() < 3) continue;
    apps.push_back({{"pid", std::atoi(f[0].c_str())}, {"name", f[1]}, {"memory_mib", f[2]}});
  }
  return {{"devices", gpus}, {"compute_processes", apps}};
}

// Whether `pid` is `ours` or descends from it, by a sample's parents.
bool descends(const std::map<int, int>& parent, int pid, int ours) {
  for (int hops = 0; pid > 1 && hops < 64; ++hops) {
    if (pid == ours) return true;
    auto it = parent.find(pid);
    if (it == parent.end()) return false;
    pid = it->second;
  }
  return pid == ours;
}

}  // namespace

std::set<std::pair<int, uint64_t>> run_processes(const std::vector<LoadSample>& samples, int ours) {
  std::set<std::pair<int, uint64_t>> mine;
  for (const auto& s : samples) {
    std::map<int, int> parent;
    for (const auto& [key, p] : s.processes) parent[key.first] = p.ppid;
    for (const auto& [key, p] : s.processes)
      if (descends(parent, key.first, ours)) mine.insert(key);
  }
  return mine;
}

LoadSample sample_load(const std::string& proc) {
  LoadSample s;
  s.at = now_s();
  {
    std::istringstream in(read_small(proc + "/stat"));
    std::string cpu;
    uint64_t v[10] = {};
    in >> cpu;
    for (auto& x : v) in >> x;
    if (cpu == "cpu") {
      // user nice system idle iowait irq softirq steal guest guest_nice (guest time is in user)
      s.idle = v[3] + v[4];
      s.steal = v[7];
      s.busy = v[0] + v[1] + v[2] + v[5] + v[6];
    }
  }
  std::istringstream(read_small(proc + "/loadavg")) >> s.loadavg_1m;
  DIR* d = opendir(proc.c_str());
  if (!d) return s;
  while (dirent* e = readdir(d)) {
    const char* name = e->d_name;
    if (name[0] < '0' || name[0] > '9') continue;
    const std::string text = read_small(proc + "/" + name + "/stat");
    // pid (comm) state ppid ... utime(14) stime(15) ... starttime(22); comm may hold spaces and parentheses
    const auto open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    uint64_t field = 0, utime = 0, stime = 0, start = 0;
    for (int i = 5; i <= 22 && rest; ++i) {
      rest >> field;
      if (i == 14) utime = field;
      if (i == 15) stime = field;
      if (i == 22) start = field;
    }
    if (!rest) continue;
    s.processes[{std::atoi(name), start}] = {ppid, text.substr(open + 1, close - open - 1), utime + stime};
  }
  closedir(d);
  return s;
}

nlohmann::json summarize_load(const std::vector<LoadSample>& samples, int ours, unsigned cores) {
  if (samples.size() < 2) return nlohmann::json::object();
  const auto& first = samples.front();
  const auto& last = samples.back();
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double wall = last.at - first.at;
  // Each process's CPU over the run: its last ticks less its first (zero for one that started
  // during the run); the run's own processes (ours and its descendants, in any sample) apart.
  const auto mine = run_processes(samples, ours);
  std::map<std::pair<int, uint64_t>, std::pair<uint64_t, uint64_t>> span;  // first, last ticks
  std::map<std::pair<int, uint64_t>, std::string> comm;
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (const auto& [key, p] : samples[i].processes) {
      if (mine.count(key)) continue;
      auto it = span.find(key);
      if (it == span.end()) span[key] = {i == 0 ? p.ticks : 0, p.ticks};
      else it->second.second = p.ticks;
      comm[key] = p.comm;
    }
  std::map<std::string, double> by_name;
  double other = 0;
  for (const auto& [key, fl] : span) {
    if (fl.second <= fl.first) continue;
    const double cpu = static_cast<double>(fl.second - fl.first) / hz;
    other += cpu;
    by_name[comm[key]] += cpu;
  }
  std::vector<std::pair<std::string, double>> ranked(by_name.begin(), by_name.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::json others = nlohmann::json::array();
  for (std::size_t i = 0; i < ranked.size() && i < 5; ++i)
    if (ranked[i].second >= 0.05) others.push_back({{"comm", ranked[i].first}, {"cpu_s", ranked[i].second}});
  double load_max = 0;
  for (const auto& s : samples) load_max = std::max(load_max, s.loadavg_1m);
  const double all = static_cast<double>((last.busy + last.idle + last.steal) - (first.busy + first.idle + first.steal));
  const double steal = all > 0 ? static_cast<double>(last.steal - first.steal) / all : 0;
  const double capacity = wall * std::max(1u, cores);
  return {{"wall_s", wall},
          {"cores", cores},
          {"samples", samples.size()},
          {"other_cpu_s", other},
          {"other_share", capacity > 0 ? other / capacity : 0.0},
          {"others", others},
          {"steal_share", steal},
          {"loadavg_max", load_max}};
}

std::vector<std::string> disturbances(const nlohmann::json& h) {
  std::vector<std::string> out;
  if (!h.is_object() || h.empty()) return out;
  if (h.contains("shards")) {  // a merged run: each shard's host
    for (const auto& shard : h["shards"])
      for (const auto& d : disturbances(shard)) out.push_back(fmt::format("shard {}: {}", shard.value("shard", 0) + 1, d));
    return out;
  }
  const double share = h.value("other_share", 0.0);
  // A second of others' CPU at least: a run of a few ticks cannot tell (10 ms ticks).
  if (share > 0.10 && h.value("other_cpu_s", 0.0) >= 1.0) {
    std::string who;
    for (const auto& o : h.value("others", nlohmann::json::array()))
      who += fmt::format("{}{} {:.1f} s", who.empty() ? "" : ", ", o.value("comm", "?"), o.value("cpu_s", 0.0));
    out.push_back(fmt::format("other processes took {:.0f}% of its {} cores ({:.1f} CPU-seconds in {:.0f} s{}{})", share * 100,
                              h.value("cores", 0), h.value("other_cpu_s", 0.0), h.value("wall_s", 0.0), who.empty() ? "" : ": ", who));
  }
  if (const double steal = h.value("steal_share", 0.0); steal > 0.05)
    out.push_back(fmt::format("the hypervisor stole {:.0f}% of the CPU time", steal * 100));
  const auto gpus = h.value("gpus", nlohmann::json::object());
  if (gpus.is_object()) {
    std::set<std::string> others;
    for (const auto& a : gpus.value("other_compute_processes", nlohmann::json::array()))
      others.insert(fmt::format("{} (pid {})", a.value("name", "?"), a.value("pid", 0)));
    if (!others.empty()) out.push_back(fmt::format("other processes used a GPU: {}", fmt::join(others, ", ")));
  }
  return out;
}

void HostLoadMonitor::start() {
  if (started_) return;
  started_ = true;
  gpus_before_ = describe_gpus();
  samples_.push_back(sample_load());
  thread_ = std::thread([this] {
    std::unique_lock lock(m_);
    while (!cv_.wait_for(lock, std::chrono::duration<double>(period_), [this] { return stopping_; })) {
      lock.unlock();
      LoadSample s = sample_load();
      lock.lock();
      samples_.push_back(std::move(s));
    }
  });
}

nlohmann::json HostLoadMonitor::stop() {
  if (!started_) return nlohmann::json::object();
  {
    std::lock_guard lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  started_ = false;
  samples_.push_back(sample_load());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json h = summarize_load(samples_, static_cast<int>(getpid()), cores);
  // GPUs: the processes on them that are not this run's, at the start or the end.
  nlohmann::json after = describe_gpus();
  if (!after["devices"].empty() || !gpus_before_["devices"].empty()) {
    // The run's own: its processes in any sample (workers may be ending, reparented, as it stops).
    std::set<int> mine;
    for (const auto& key : run_processes(samples_, static_cast<int>(getpid()))) mine.insert(key.first);
    nlohmann::json others = nlohmann::json::array();
    for (const auto* g : {&gpus_before_, &after})
      for (const auto& a : (*g)["compute_processes"])
        if (!mine.count(a.value("pid", 0))) others.push_back(a);
    h["gpus"] = {{"start", gpus_before_["devices"]}, {"end", after["devices"]}, {"other_compute_processes", others}};
  }
  samples_.clear();
  return h;
}

}  // namespace bb
