// compare --confirm: a performance regression confirmed by re-timing. Each implementation that
// read slower in NEW is timed again now, on this machine, NEW's library against BASE's, paired
// (alternating blocks in one process pair, the way a speedup is measured: paired.hpp), from the
// copies the runs kept by hash (library_store.hpp). A slowdown the paired interval does not
// confirm (the host was busy that night, not the code slower) is no regression; the change says
// what the re-timing found either way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "compare/regression.hpp"
#include "run_record.hpp"

namespace bb {

struct ConfirmOptions {
  std::string binary;                 // the backendbench that re-times (this one)
  std::filesystem::path work;         // a folder of its own for the roots and logs it makes
  std::vector<std::string> extra;     // more flags for the re-timing runs
};

// Re-times every performance regression of `c` and updates it: confirmed, or no regression.
// Returns how many were re-timed.
int confirm_regressions(RunComparison& c, const RunRecord& base, const RunRecord& next, const ConfirmOptions& options);

}  // namespace bb
