#include "worker/worker_integrity.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace bb {

uint64_t integrity_hash(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      h[k] = (h[k] ^ w) * 0x100000001b3ull;
      h[k] ^= h[k] >> 29;
    }
  uint64_t tail = 0;
  for (std::size_t j = 0; i + j < bytes; ++j) tail = tail * 131 + p[i + j];
  uint64_t out = bytes;
  for (int k = 0; k < 4; ++k) out = (out ^ h[k]) * 0xff51afd7ed558ccdull, out ^= out >> 33;
  return (out ^ tail) * 0xc4ceb9fe1a85ec53ull;
}

std::size_t WorkerIntegrity::watched_bytes() const {
  std::size_t n = 0;
  for (const auto& o : objects_)
    for (const auto& r : o.regions) n += r.bytes;
  return n;
}

// dl_iterate_phdr's visitor, with access to the class's parts.
struct IntegrityScan {
  static std::string name_of(const dl_phdr_info* info) {
    if (info->dlpi_name && *info->dlpi_name) return info->dlpi_name;
    return "the worker's executable";
  }

  // ld.so relocates an object's dynamic entries in place, except in the vDSO.
  template <typename T>
  static T at(const dl_phdr_info* info, ElfW(Addr) p) {
    return reinterpret_cast<T>(p < info->dlpi_addr ? p + info->dlpi_addr : p);
  }

  static int capture(dl_phdr_info* info, std::size_t, void* data) {
    auto& w = *static_cast<WorkerIntegrity*>(data);
    WorkerIntegrity::Object obj;
    obj.name = name_of(info);
    if (w.unwatched_ && w.unwatched_->count(obj.name)) return 0;
    const bool vdso = obj.name.find("linux-vdso") != std::string::npos || obj.name.find("linux-gate") != std::string::npos;
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const auto& ph = info->dlpi_phdr[i];
      const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
      if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(begin);
      const bool code = ph.p_type == PT_LOAD && (ph.p_flags & PF_X);
      const bool relro = ph.p_type == PT_GNU_RELRO;
      if ((code || relro) && ph.p_memsz > 0) {
        // RELRO is made read-only whole pages at a time: the part of a page past its end stays
        // writable, and is not watched.
        std::size_t bytes = ph.p_memsz;
        if (relro) {
          const uintptr_t page = 4096;
          const uintptr_t end = (begin + bytes) & ~(page - 1);
          bytes = end > begin ? end - begin : 0;
        } else {
          bytes = ph.p_filesz;  // the mapped file's bytes; a bss-like tail is not code
        }
        if (bytes) obj.regions.push_back({begin, bytes, integrity_hash(reinterpret_cast<const void*>(begin), bytes), code});
      }
    }
    const std::size_t index = w.objects_.size();
    if (dyn && !vdso) {
      const ElfW(Sym)* symtab = nullptr;
      const char* strtab = nullptr;
      const ElfW(Rela)* tables[2] = {nullptr, nullptr};
      std::size_t sizes[2] = {0, 0};
      for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_SYMTAB) symtab = at<const ElfW(Sym)*>(info, d->d_un.d_ptr);
        if (d->d_tag == DT_STRTAB) strtab = at<const char*>(info, d->d_un.d_ptr);
        if (d->d_tag == DT_JMPREL) tables[0] = at<const ElfW(Rela)*>(info, d->d_un.d_ptr);
        if (d->d_tag == DT_PLTRELSZ) sizes[0] = d->d_un.d_val;
        if (d->d_tag == DT_RELA) tables[1] = at<const ElfW(Rela)*>(info, d->d_un.d_ptr);
        if (d->d_tag == DT_RELASZ) sizes[1] = d->d_un.d_val;
      }
#if defined(__x86_64__)
      const unsigned jump_slot = R_X86_64_JUMP_SLOT, glob_dat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
      const unsigned jump_slot = R_AARCH64_JUMP_SLOT, glob_dat = R_AARCH64_GLOB_DAT;
#else
      const unsigned jump_slot = ~0u, glob_dat = ~0u;
#endif
      for (int t = 0; t < 2 && symtab && strtab; ++t)
        for (std::size_t k = 0; tables[t] && k < sizes[t] / sizeof(ElfW(Rela)); ++k) {
          const ElfW(Rela)& r = tables[t][k];
          const unsigned type = static_cast<unsigned>(ELF64_R_TYPE(r.r_info));
          if (type != jump_slot && type != glob_dat) continue;
          WorkerIntegrity::Slot s;
          s.at = reinterpret_cast<void* const*>(info->dlpi_addr + r.r_offset);
          s.value = *s.at;
          s.object = index;
          s.symbol = strtab + symtab[ELF64_R_SYM(r.r_info)].st_name;
          w.slots_.push_back(std::move(s));
        }
    }
    w.objects_.push_back(std::move(obj));
    return 0;
  }

  // The objects loaded now, by name: a watched object that was unloaded since (a library
  // dlclosed by the runtime that opened it) is no longer read.
  static int loaded(dl_phdr_info* info, std::size_t, void* data) {
    static_cast<std::set<std::string>*>(data)->insert(name_of(info));
    return 0;
  }
  static std::set<std::string> loaded_now() {
    std::set<std::string> names;
    dl_iterate_phdr(loaded, &names);
    return names;
  }
  // How many objects were unloaded in the process's life (the first visit says; it stops there).
  static int first_subs(dl_phdr_info* info, std::size_t size, void* data) {
    *static_cast<unsigned long long*>(data) = size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs ? info->dlpi_subs : ~0ull;
    return 1;
  }
  static unsigned long long unloads() {
    unsigned long long subs = ~0ull;
    dl_iterate_phdr(first_subs, &subs);
    return subs;
  }
};

// The names of the watched objects still loaded: all of them, unless something was unloaded
// since the capture.
std::set<std::string> WorkerIntegrity::still_loaded() const {
  if (IntegrityScan::unloads() == unloads_ && unloads_ != ~0ull) {
    return names_;
  }
  return IntegrityScan::loaded_now();
}

namespace {
std::set<std::string>& interpreter_names() {
  static std::set<std::string> names;
  return names;
}
}  // namespace

void set_interpreter_objects(std::set<std::string> names) {
  for (auto it = names.begin(); it != names.end();) it = is_device_runtime_object(*it) ? names.erase(it) : std::next(it);
  interpreter_names() = std::move(names);
}
const std::set<std::string>& interpreter_objects() { return interpreter_names(); }
std::set<std::string> loaded_objects() { return IntegrityScan::loaded_now(); }

bool is_device_runtime_object(const std::string& name) {
  const auto slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  for (const char* prefix : {"libcuda.so", "libcudart.so", "libamdhip64.so", "libhsa-runtime64.so", "backendbench_cuda", "backendbench_hip"})
    if (base.rfind(prefix, 0) == 0) return true;
  return false;
}

WorkerIntegrity WorkerIntegrity::capture(const std::set<std::string>& unwatched) {
  WorkerIntegrity w;
  w.unloads_ = IntegrityScan::unloads();
  w.unwatched_ = &unwatched;
  dl_iterate_phdr(IntegrityScan::capture, &w);
  w.unwatched_ = nullptr;
  for (const auto& o : w.objects_) w.names_.insert(o.name);
  return w;
}

std::string WorkerIntegrity::check_slots() const {
  const bool none_unloaded = IntegrityScan::unloads() == unloads_ && unloads_ != ~0ull;
  const auto names = none_unloaded ? std::set<std::string>{} : IntegrityScan::loaded_now();
  for (const auto& s : slots_) {
    const auto& obj = objects_[s.object];
    if (!none_unloaded && !names.count(obj.name)) continue;
    void* now = *s.at;
    if (now == s.value) continue;
    Dl_info where{};
    const char* target = dladdr(now, &where) && where.dli_fname ? where.dli_fname : "an address in no loaded object";
    return fmt::format("the GOT slot of {} in {} was rewritten: it pointed at {}, now at {} in {}", s.symbol, obj.name, s.value, now, target);
  }
  return {};
}

std::string WorkerIntegrity::check_all() const {
  if (auto s = check_slots(); !s.empty()) return s;
  const auto names = still_loaded();
  for (const auto& obj : objects_) {
    if (!names.count(obj.name)) continue;
    for (const auto& r : obj.regions)
      if (integrity_hash(reinterpret_cast<const void*>(r.begin), r.bytes) != r.hash)
        return fmt::format("{} of {} was rewritten ({} bytes at {:#x})", r.code ? "the code" : "the read-only-after-relocation data", obj.name,
                           r.bytes, r.begin);
  }
  return {};
}

}  // namespace bb
