#include "worker/code_seal.hpp"

#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "run/workers/sandbox_off.hpp"

namespace bb {

namespace {

#if defined(__x86_64__) || defined(__aarch64__)
constexpr long kMseal = 462;  // the same number on every architecture since 6.10
#else
constexpr long kMseal = -1;
#endif

bool probe() {
  if (kMseal < 0 || sandbox_part_off("mseal")) return false;
  // A zero-length seal of nothing: 0 where the kernel has the call, ENOSYS where it has not.
  return syscall(kMseal, 0UL, 0UL, 0UL) == 0;
}

struct Visit {
  const std::function<bool(const std::string&)>* seal;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
};

int visit(dl_phdr_info* info, std::size_t, void* data) {
  auto& v = *static_cast<Visit*>(data);
  const std::string name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the worker's executable";
  if (name.find("linux-vdso") != std::string::npos || name.find("linux-gate") != std::string::npos || !(*v.seal)(name)) return 0;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const uintptr_t begin = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_memsz > 0) {
      // The whole mapping of the code segment.
      v.ranges.emplace_back(begin, (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1));
    } else if (ph.p_type == PT_GNU_RELRO && ph.p_memsz > 0) {
      // Read-only whole pages at a time: the part of a page past its end stays writable.
      const uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz) & ~(page - 1);
      if (end > begin) v.ranges.emplace_back(begin, end);
    }
  }
  return 0;
}

}  // namespace

bool code_seal_supported() {
  static const bool supported = probe();
  return supported;
}

int seal_loaded_code(const std::function<bool(const std::string&)>& seal) {
  if (!code_seal_supported()) return 0;
  Visit v{&seal, {}};
  dl_iterate_phdr(visit, &v);
  int sealed = 0;
  for (const auto& [begin, end] : v.ranges)
    if (syscall(kMseal, begin, end - begin, 0UL) == 0) ++sealed;
  return sealed;
}

bool is_dynamic_loader(const std::string& name) {
  const auto base = name.substr(name.find_last_of('/') + 1);
  return base.rfind("ld-linux", 0) == 0 || base.rfind("ld64.so", 0) == 0 || base.rfind("ld.so", 0) == 0;
}

}  // namespace bb
