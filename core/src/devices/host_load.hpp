// What else the host did while a run measured: the CPU time of processes that are not the
// run's (by name, the busiest first), the CPU time stolen by a hypervisor, the load average,
// and, where nvidia-smi answers, the GPUs' clocks and the processes of others on them. A slowdown
// a run measured on a busy host is the host's, not the code's: `compare` says so (a run that
// was disturbed), and `compare --confirm` re-times the code before calling it a regression.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace bb {

// One look at the machine: every process's CPU ticks, and the whole machine's.
struct LoadSample {
  struct Process {
    int ppid = 0;
    std::string comm;
    uint64_t ticks = 0;  // utime + stime
  };
  std::map<std::pair<int, uint64_t>, Process> processes;  // by (pid, start time): a reused pid is another process
  uint64_t busy = 0, idle = 0, steal = 0;                  // /proc/stat "cpu", in ticks
  double loadavg_1m = 0;
  double at = 0;  // seconds, monotonic
};
LoadSample sample_load(const std::string& proc = "/proc");

// The processes of the run (`ours` and its descendants) in any of `samples`, by (pid, start time).
std::set<std::pair<int, uint64_t>> run_processes(const std::vector<LoadSample>& samples, int ours);

// The summary of two samples, `ours` the process whose descendants are the run: {"wall_s",
// "cores", "other_cpu_s", "other_share" (of the machine's capacity), "others": [{comm, cpu_s}]
// busiest first, "steal_share", "loadavg_max"}.
nlohmann::json summarize_load(const std::vector<LoadSample>& samples, int ours, unsigned cores);

// Reasons a run was disturbed, from its host_load (empty: it was not): other processes took more
// than 10% of the machine (and a CPU-second at least), a hypervisor stole more than 5%, or
// another process used a GPU.
std::vector<std::string> disturbances(const nlohmann::json& host_load);

// Samples the machine every `period` from start() to stop(), in a thread of its own.
class HostLoadMonitor {
 public:
  explicit HostLoadMonitor(double period_s = 1.0) : period_(period_s) {}
  ~HostLoadMonitor() { stop(); }
  void start();
  // The summary (summarize_load), with "gpus" from nvidia-smi where it answers.
  nlohmann::json stop();

 private:
  double period_;
  std::vector<LoadSample> samples_;
  nlohmann::json gpus_before_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false, started_ = false;
};

}  // namespace bb
