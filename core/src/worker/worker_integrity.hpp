// The worker's own code as loaded, and whether it still is: a plugin runs in the worker's
// process and can rewrite what times it (a GOT slot of clock_gettime or cudaEventElapsedTime
// pointed at a clock of its own, a patched instruction). Captured once, before any plugin is
// loaded, over every object then in the process (the worker, ld.so, the C and C++ runtimes,
// the device runtime plugin and the driver it loaded, the vDSO); checked after every timed
// block (the GOT slots, cheap) and after every test (the read-only-after-relocation data and
// the executable segments, hashed).
//
// The worker runs with every symbol bound at load (LD_BIND_NOW, full RELRO for our own
// objects), so nothing legitimate changes a slot after capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace bb {

class WorkerIntegrity {
 public:
  // Records every object loaded now, except those named in `unwatched` (what a warm
  // interpreter loaded: the plugin's side, below). Objects loaded later (the plugin's, and what
  // it loads) are not watched.
  static WorkerIntegrity capture(const std::set<std::string>& unwatched = {});

  bool captured() const { return !objects_.empty(); }
  std::size_t slot_count() const { return slots_.size(); }
  std::size_t watched_bytes() const;

  // Empty when every watched GOT slot holds what it held at capture; else names the first
  // that does not (symbol, object, old and new target).
  std::string check_slots() const;
  // check_slots, then every watched region's hash: empty when intact, else what changed.
  std::string check_all() const;

 private:
  struct Region {
    uintptr_t begin = 0;
    std::size_t bytes = 0;
    uint64_t hash = 0;
    bool code = false;  // an executable segment, else read-only-after-relocation data
  };
  struct Object {
    std::string name;
    std::vector<Region> regions;
  };
  struct Slot {
    void* const* at = nullptr;
    void* value = nullptr;
    std::size_t object = 0;
    std::string symbol;
  };
  std::set<std::string> still_loaded() const;

  std::vector<Object> objects_;
  std::vector<Slot> slots_;
  std::set<std::string> names_;
  unsigned long long unloads_ = ~0ull;  // objects unloaded before the capture (dlpi_subs)
  const std::set<std::string>* unwatched_ = nullptr;  // during capture()

  friend struct IntegrityScan;
};

// The objects a Python worker's interpreter loaded before the worker was forked from it
// (worker/python_zygote_process.cpp: PyTorch, Triton, the interpreter itself): the plugin's
// side, as the libraries a .py implementation's import loads in a worker started cold, so not
// watched (hashing PyTorch's libraries after every test and their GOT slots after every block
// cost more than the calls). The device's runtime and driver are watched wherever they were
// loaded: they are never among these.
void set_interpreter_objects(std::set<std::string> names);
const std::set<std::string>& interpreter_objects();
// The names of the objects loaded now.
std::set<std::string> loaded_objects();
// Whether `name` is a device runtime or driver library (CUDA's, HIP's).
bool is_device_runtime_object(const std::string& name);

// Hash of a byte range, every byte (word lanes; not cryptographic: what it guards is compared
// with itself).
uint64_t integrity_hash(const void* data, std::size_t bytes);

}  // namespace bb
