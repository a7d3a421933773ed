// The worker's own code sealed (Linux mseal, 6.10): a plugin runs in the worker's process and
// could make the code and the read-only-after-relocation data of what times it writable again
// (mprotect) to patch them; sealed, mprotect, munmap and mremap of those pages fail (EPERM).
// Sealed before any plugin loads: the worker's executable, the C and C++ runtimes and the rest
// of what the worker itself loaded, then its device runtime plugin (ours); not ld.so (older
// glibc makes its own RELRO writable for a moment to load a library that needs an executable
// stack), nor the vendor's driver and runtime libraries (what they do with their own pages is
// theirs), nor what a warm interpreter loaded (the plugin's side). Writes through /proc/self/mem still pass a seal:
// the hash of the same regions after every test (worker_integrity.hpp) sees them.
// BACKENDBENCH_SANDBOX_OFF=mseal turns it off; host.sandbox says where it is off.
#pragma once

#include <functional>
#include <string>

namespace bb {

// Whether this kernel seals (and sealing is not turned off).
bool code_seal_supported();

// Seals the executable segments and RELRO of every object loaded now for which `seal(name)`
// says so. The number of ranges sealed; 0 where sealing is not supported.
int seal_loaded_code(const std::function<bool(const std::string& name)>& seal);

// Whether `name` is the dynamic loader (ld-linux*.so*, ld64.so*).
bool is_dynamic_loader(const std::string& name);

}  // namespace bb
