// Workers started before the run knows its devices: the first implementations of each device
// kind and the first one's reference, each behind its own walls with its device context made
// (a "warm" request), started the moment the plan is read, so that their contexts are made
// beside the device probe and beside each other instead of after the probe and, for the later
// implementations, before a timed block (docs/PERFORMANCE.md, "Workers started with the plan").
// A slot takes one when its job needs a worker of that key on that device; what no slot takes
// is abandoned when the run ends. No plugin code runs in them before their turn: a library is
// loaded by its first test's prepare, as in a spare (spare_worker.hpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/workers/executor.hpp"
#include "run/workers/spare_worker.hpp"

namespace bb {

class WorkerStock {
 public:
  WorkerStock() = default;
  ~WorkerStock();
  WorkerStock(const WorkerStock&) = delete;
  WorkerStock& operator=(const WorkerStock&) = delete;

  // Starts `worker` (walls set) under `key`, for device kind `kind`: its process from the
  // calling thread, which must outlive it (Executor::launch), its `warm` request on another
  // thread.
  void start(const std::string& key, const std::string& kind, std::unique_ptr<Executor> worker, nlohmann::json warm,
             double timeout_seconds);
  bool holds(const std::string& key) const;
  // The worker started under `key`, once its warm-up is over, if it succeeded; null otherwise
  // (none, or one that could not warm up: ended).
  std::unique_ptr<Executor> take(const std::string& key);
  // Waits for every warm-up still under way (before a timed block: nothing starts beside it).
  void settle();
  // Ends every worker no slot took, without waiting for it (Executor::abandon): the run's end.
  void abandon_all();
  // Ends those of one device kind and waits for their end (before any test: no device context
  // is torn down beside a measurement).
  void retire_kind(const std::string& kind);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  struct Entry {
    std::string kind;
    std::unique_ptr<SpareWorker> spare;
  };
  void end_if(const std::function<bool(const Entry&)>& which, bool wait);
  std::map<std::string, Entry> workers_;
};

// The keys a slot looks a worker up by: an implementation's (op and implementation index), a
// reference's (its worker key, job_runner.hpp), each on device `ordinal` of `device`.
std::string stocked_impl_key(int op, int impl, const std::string& device, int ordinal);
std::string stocked_reference_key(const std::string& reference_key, int ordinal);

// Whether this machine may have a device of `kind` at all (its driver's device node exists),
// asked before anything is started for it; true for a kind it cannot tell.
bool might_have_device(const std::string& kind);
// How many devices of `kind` this machine shows before any is asked (CUDA: the entries of
// CUDA_VISIBLE_DEVICES where it is set, else the /dev/nvidia<N> nodes); -1 where it cannot tell.
// A run on every device of a host of several starts no stock (it serves device 0 alone).
int gpu_count_hint(const std::string& kind);

}  // namespace bb
