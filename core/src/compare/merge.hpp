// The shards of one sweep joined into one run: what `backendbench merge` computes (no I/O; the
// command reads the shards and writes the reports). docs/COMPARE.md has the rules.
//
// Shards of one sweep share RunRecord::sweep_id and shard.count and have distinct shard.index
// values. A merged run may be merged again with more shards (its merged_shards say which it
// holds), so a late shard joins an earlier --allow-partial merge.
#pragma once

#include <string>
#include <vector>

#include "expected.hpp"
#include "run_record.hpp"

namespace bb {

struct ShardRun {
  std::string where;  // the path it was read from, for messages
  RunRecord run;
};

struct MergeOptions {
  bool allow_partial = false;  // merge with shards missing, or shards that did not finish
  std::string command;         // the merge's command line, recorded in provenance.merge
};

struct MergeOutcome {
  RunRecord run;
  std::vector<std::string> warnings;  // what --allow-partial let through, and the like
};

// Refuses (naming the file and the field) shards of different sweeps or schema versions,
// different shard counts, a shard index given twice, a test found in two shards, and (unless
// allow_partial) a missing shard or one that did not finish. The merged run has shard {0, 1},
// merged_shards listing the shards, the ops and devices unioned, the tests in sweep order (op,
// implementation, repeat, case as the shards ran them), wall and measured times summed,
// started_at the earliest and finished_at the latest, every shard's host in host.hosts, and
// scores and exit status recomputed (rescore).
Expected<MergeOutcome> merge_shards(const std::vector<ShardRun>& shards, const MergeOptions& options);

}  // namespace bb
