#include "devices/host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "parallel.hpp"
#include "version.hpp"

namespace bb {

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

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

}  // namespace bb
