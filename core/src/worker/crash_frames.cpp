#include "worker/crash_frames.hpp"

#if defined(__linux__)
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#endif

namespace bb {

#if defined(__linux__)
namespace {

constexpr int kMaxModules = 512;
constexpr int kNameBytes = 512;
struct Module {
  uintptr_t lo, hi, bias;
  char name[kNameBytes];
};
struct Modules {
  int count = 0;
  Module m[kMaxModules];
};
// Two tables: the handler reads the current one while the next is filled (no lock in a handler).
Modules g_tables[2];
std::atomic<int> g_current{-1};
int g_out = -1;  // the output, kept apart from fd 2 (a plugin may close or redirect that)
std::atomic<bool> g_reporting{false};

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto* t = static_cast<Modules*>(data);
  if (t->count >= kMaxModules) return 1;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (lo >= hi) return 0;
  Module& m = t->m[t->count++];
  m.lo = lo;
  m.hi = hi;
  m.bias = info->dlpi_addr;
  const char* name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
  std::strncpy(m.name, name, kNameBytes - 1);
  m.name[kNameBytes - 1] = 0;
  if (!*m.name) {  // the executable itself
    const ssize_t n = readlink("/proc/self/exe", m.name, kNameBytes - 1);
    m.name[n > 0 ? n : 0] = 0;
  }
  return 0;
}

// Async-signal-safe writing: literal text and hexadecimal numbers into a line buffer.
struct Line {
  char buf[kNameBytes + 128];
  int n = 0;
  void text(const char* s) {
    while (*s && n < static_cast<int>(sizeof buf) - 1) buf[n++] = *s++;
  }
  void hex(uintptr_t v) {
    text("0x");
    char digits[2 * sizeof v];
    int k = 0;
    do {
      digits[k++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v);
    while (k && n < static_cast<int>(sizeof buf) - 1) buf[n++] = digits[--k];
  }
  void flush() {
    if (n < static_cast<int>(sizeof buf)) buf[n++] = '\n';
    for (int off = 0; off < n;) {
      const ssize_t w = write(g_out, buf + off, static_cast<size_t>(n - off));
      if (w <= 0) break;
      off += static_cast<int>(w);
    }
    n = 0;
  }
};

uintptr_t parse_hex(const char*& p, const char* end) {
  uintptr_t v = 0;
  for (; p < end; ++p) {
    const char c = *p;
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v * 16 + static_cast<uintptr_t>(d);
  }
  return v;
}

// A module not noted yet (one being loaded: its static initialisers crashed) from
// /proc/self/maps, read with open and read alone: the mapping's file and the address's offset in
// it (for a shared library, its virtual address). False where none maps it.
bool from_maps(uintptr_t pc, Line& l) {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static char buf[1 << 16];
  char line[kNameBytes + 128];
  int n = 0;
  bool found = false;
  for (ssize_t got; !found && (got = read(fd, buf, sizeof buf)) > 0;)
    for (ssize_t i = 0; i < got && !found; ++i) {
      if (buf[i] != '\n') {
        if (n < static_cast<int>(sizeof line) - 1) line[n++] = buf[i];
        continue;
      }
      // "start-end perms offset dev inode   path"
      const char* p = line;
      const char* end = line + n;
      const uintptr_t lo = parse_hex(p, end);
      ++p;
      const uintptr_t hi = parse_hex(p, end);
      int field = 0;
      uintptr_t file_offset = 0;
      for (; p < end && field < 5; ++p)
        if (*p == ' ') {
          while (p + 1 < end && p[1] == ' ') ++p;
          ++field;
          if (field == 2) {
            const char* q = p + 1;
            file_offset = parse_hex(q, end);
          }
        }
      if (pc >= lo && pc < hi && p < end && *p == '/') {
        line[n] = 0;
        l.text(" ");
        l.hex(pc - lo + file_offset);
        l.text(" ");
        l.text(p);
        found = true;
      }
      n = 0;
    }
  close(fd);
  return found;
}

void frame(uintptr_t pc) {
  Line l;
  l.text("backendbench-frame ");
  l.hex(pc);
  bool known = false;
  const int current = g_current.load(std::memory_order_acquire);
  if (current >= 0) {
    const Modules& t = g_tables[current];
    for (int i = 0; i < t.count && !known; ++i)
      if (pc >= t.m[i].lo && pc < t.m[i].hi) {
        l.text(" ");
        l.hex(pc - t.m[i].bias);
        l.text(" ");
        l.text(t.m[i].name);
        known = true;
      }
  }
  if (!known) from_maps(pc, l);
  l.flush();
}

uintptr_t faulting_pc(void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

void on_crash(int sig, siginfo_t* info, void* context) {
  if (!g_reporting.exchange(true)) {
    Line l;
    l.text("backendbench-crash SIG");
    const char* abbrev = sigabbrev_np(sig);
    l.text(abbrev ? abbrev : "?");
    if (info && info->si_code <= 0) {  // sent (raise, kill): no faulting address
      l.text(" sent");
    } else {
      l.text(" addr=");
      l.hex(reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr));
    }
    l.flush();
    const uintptr_t pc = faulting_pc(context);
    if (pc) frame(pc);
    // The stack from here: this handler, the kernel's return trampoline, then the faulting frame
    // (written above) and its callers, each a return address.
    void* frames[64];
    const int n = backtrace(frames, 64);
    int from = 0;
    for (int i = 0; i < n; ++i)
      if (reinterpret_cast<uintptr_t>(frames[i]) == pc) from = i + 1;
    if (!from) from = n > 2 ? 2 : n;
    for (int i = from; i < n; ++i) frame(reinterpret_cast<uintptr_t>(frames[i]));
  }
  // SA_RESETHAND put the default action back; the signal raised again is pending until this
  // handler returns, and then ends the process as it would have (a signal sent with raise() or
  // kill(), which returning would let the process survive, as much as a fault).
  raise(sig);
}

}  // namespace

void note_loaded_modules() {
  const int next = g_current.load() == 0 ? 1 : 0;
  g_tables[next].count = 0;
  dl_iterate_phdr(add_module, &g_tables[next]);
  g_current.store(next, std::memory_order_release);
}

void install_crash_frames() {
  g_out = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 120);
  if (g_out < 0) return;
  void* prime[2];
  backtrace(prime, 2);  // loads the unwinder now: nothing is loaded inside a handler
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
  note_loaded_modules();
}

#else
void install_crash_frames() {}
void note_loaded_modules() {}
#endif

}  // namespace bb
