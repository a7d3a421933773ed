// Whether an implementation's reported timing can be believed, judged on the host from what no
// plugin can touch: the host's own clock around every block it asked for, the baseline's blocks
// (timed in another process), and the physical floor of the case's work.
//
// A block's host time is its fixed cost (messages, restoring inputs, sending buffers back:
// F), its warm-up calls and its samples, each sample with an overhead of its own (flush,
// poison, clock reads: o). The baseline's worker holds no plugin under test, so its F and o are
// honest; the implementation's blocks pay the same F and o (same buffers, same worker code). So
// the implementation's true time per call is about
//     T = (host - F_b - n * o_b) / (n + w)
// with n samples and w warm-up calls as its worker reported them. A forged clock (or work done
// outside the timed region) shows as T far above the reported median. Each block's host time is
// first cut by the time other processes kept its worker from running (run_queue.hpp: the kernel's
// account, net of the worker's own CPU time): a busy machine is not a forged clock. (A sample count forged
// upward lowers T: the worker, not the host, counts samples today; docs/RELIABILITY.md, limits.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/measurement.hpp"

namespace bb {

struct BlockRecord {
  double host_seconds = 0;  // the block's round trip on the host's clock
  double foreign_wait = 0;  // of which other processes kept its worker from running (run_queue.hpp)
  Measurement m;            // as its worker reported it (statistics recomputed on the host)
  // A block on fresh inputs (fresh_inputs.hpp): each sample's time on the host's clock from its
  // go to its worker's word that it had ended (empty where the block was not paced).
  std::vector<double> paced;
};

struct AuditOptions {
  bool device = false;  // device timing: the host-side launch work of a call is outside its
                        // timed region by design, so more slack per call
  double min_excess_per_call = 0;  // 0: the default for the kind (CPU 5 us, device 200 us)
  bool pinned = false;  // a CPU pairing that ended with both sides pinned to one CPU (cpu_pairing.hpp)
};

// The reason the implementation's timing is IMPLAUSIBLE, or nullopt. Pairs are (impl[k],
// base[k]); the first pair (its warm-up differs) is left out; needs three pairs or more.
std::optional<std::string> audit_clock(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base,
                                       const AuditOptions& options = {});

// The same question, sample by sample, for blocks on fresh inputs (`paced`): each sample's call
// lies between the host's go and its worker's word that it ended, so that span is the call's
// true time and two wake-ups, whatever the worker's clock says. A low quantile of a block's spans
// (a wake-up delayed by the machine only adds) less the worker's median is the round trip; the
// baseline's blocks, in a process with no plugin under test, give the honest one. An
// implementation whose round trip is longer than the baseline's by more than its own median and
// the slack (CPU 5 us, or a quarter of the round trip; half where the pairing was not pinned to
// one CPU: a wake-up across cores may cost either side some 10 us more; or, where more, the
// spread of the baseline's round trips between its blocks, the interquartile range: a loaded
// machine's, which no excess within it can be told from), in three quarters of the
// blocks and in their median, is IMPLAUSIBLE. Unlike audit_clock it needs no block's overhead to cancel
// another's: a busy machine's delays, which fall between samples and on every wake-up, leave the
// low quantile alone. Pairs as audit_clock's; nullopt where fewer than three pairs are paced.
std::optional<std::string> audit_paced(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base,
                                       const AuditOptions& options = {});

// The checked calls (the last of each block, whose outputs the host compares) against the
// others: a plugin that does the work only when it will be checked shows slow last calls.
std::optional<std::string> audit_checked_calls(const std::vector<BlockRecord>& impl, const AuditOptions& options = {});

// Every audit of one test's timed blocks, as the host applies them: CPU blocks on fresh inputs
// (paced) sample by sample (audit_paced; the last call is not the judged one there), the others
// by their checked calls and, against a baseline, by block (audit_clock); then a cold median
// against the physical floor. The first reason found, or nullopt.
struct TimingAudit {
  AuditOptions options;
  bool cold = true;
  double median = 0;             // the implementation's reported median, seconds
  std::optional<double> bytes;   // the case's bytes moved
  double peak_bytes_per_second = 0;
};
std::optional<std::string> audit_timing(const std::vector<BlockRecord>& impl, const std::vector<BlockRecord>& base, const TimingAudit& a);

// Below the physical floor: a median under half the time the case's bytes take at the measured
// peak bandwidth (bytes per second; 0: unknown). nullopt when plausible or unknown.
std::optional<std::string> audit_floor(double median_seconds, std::optional<double> bytes, double peak_bytes_per_second);

}  // namespace bb
