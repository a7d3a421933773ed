// The walls a worker gets, decided here, beside the sandbox that puts them up (sandbox.hpp): what
// each worker may see (its own library, no other; the run's folders read-only; its log folder
// hidden), whether it runs as a user of its own, which GPU alone it sees. The executor puts them
// up around the next worker it starts (Executor::set_walls).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "devices/device_runtimes.hpp"
#include "run/session_options.hpp"
#include "run/workers/executor.hpp"

namespace bb {

struct SweepContext;

// The walls of a worker that may see `library` (and no other of `libraries`); "" for a worker
// that probes.
WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::string& library);
// ... that may see every one of `own_libraries` (none: a worker that probes).
WorkerWalls walls_for(const SessionOptions& o, const std::filesystem::path& log_dir, const std::vector<std::string>& libraries,
                      const std::vector<std::string>& own_libraries);
// The first path a worker must read (its binary, the root, the source folders the root links to:
// `linked`, the runtime plugins, Python's packages) that a user of its own could not, "" where
// none: where one is, workers run as uid 0 without capabilities instead (walls_for), and
// /proc/self/mem is theirs to write.
std::string unreachable_for_workers(const SessionOptions& o, const std::vector<std::string>& linked);
// The folders outside `root` that its ops' manifests, data/ folders and the given libraries link
// to (a CMake build links them to the op's source folder): a worker reads them as it reads the
// root, read-only.
std::vector<std::string> linked_source_dirs(const std::filesystem::path& root, const std::vector<std::string>& libraries,
                                            const std::vector<std::string>& own_libraries);
// The run's: its options, log folder and libraries; with `device` (a worker of a GPU's slot),
// that device alone (WorkerWalls::device_uuid) where the run knows its UUID, its runtime takes
// it (RuntimeRow::narrow_uuid_prefix) and the device is no partition.
WorkerWalls walls_for(const SweepContext& ctx, const std::string& library, SlotDevice device = {});
WorkerWalls walls_for(const SweepContext& ctx, const std::vector<std::string>& own_libraries, SlotDevice device = {});

}  // namespace bb
