// What a run knows while it runs, read-only: its plans, options, device kinds, log folder and
// libraries, and the workers started with the plan. The worker slots, their workers' supply and
// walls, and each job read it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "devices/device_kind.hpp"
#include "plan/plan.hpp"
#include "run/session_options.hpp"

namespace bb {

class WorkerStock;

// What the run knows while it runs (read-only).
struct SweepContext {
  const std::vector<OpPlan>& plans;
  const SessionOptions& options;
  const std::map<std::string, DeviceKind>& device_kinds;  // the kinds in use, by name (cpu always)
  std::filesystem::path log_dir;         // hidden from every worker
  std::vector<std::string> libraries;    // every plugin library of the run: each worker sees its own only
  WorkerStock* stock = nullptr;          // workers started with the plan (worker_stock.hpp), if any
};

}  // namespace bb
