#include "host_info.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "parallel.hpp"
#include "version.hpp"

namespace bb {

nlohmann::json describe_host() {
  nlohmann::json h;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  h["hostname"] = name;
  utsname u{};
  if (uname(&u) == 0) {
    h["os"] = std::string(u.sysname) + " " + u.release;
    h["arch"] = u.machine;
  }
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      h["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  h["cores"] = std::thread::hardware_concurrency();
  h["usable_cores"] = usable_cores();  // this process's CPU affinity (taskset, a Slurm cpuset)
  std::ifstream mem("/proc/meminfo");
  for (std::string line; std::getline(mem, line);) {
    if (line.rfind("MemTotal", 0) == 0) {
      h["memory_kib"] = std::stoll(line.substr(line.find(':') + 1));
      break;
    }
  }
  h["backendbench_version"] = kVersion;
  return h;
}

double measure_cpu_copy_bandwidth() {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<uint8_t> a(kBytes, 1), b(kBytes, 2);
  double best = 0;
  for (int i = 0; i < 4; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_copy(b.data(), a.data(), kBytes);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, 2.0 * static_cast<double>(kBytes) / s);
  }
  return best;
}

}  // namespace bb
