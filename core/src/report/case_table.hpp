// The per-case table: each case (its shapes, its device) with a row for every implementation
// that ran it: verdict, median, GB/s, TFLOP/s, percent of peak bandwidth, the paired speedup and
// its interval, and how close the outputs came to the reference (max abs and rel error, the
// share of the tolerance used), on passing tests too. One model, three renderings: the console
// (`--table`), tests.csv (one row per test) and the HTML report's "Per case" section.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "run_record.hpp"

namespace bb {

// One case of one op on one device (and pass, under --repeat): its tests, one per implementation,
// in implementation order.
struct CaseGroup {
  std::string op, case_id, shapes, device;
  int repeat = 0;
  std::vector<const TestResult*> tests;
};
// The run's cases, op by op in the run's op order, each op's cases in the order they first ran.
// SKIPPED tests are left out (a case every implementation skipped is not listed).
std::vector<CaseGroup> case_groups(const RunRecord& run);

// A row's cells as text, "-" for none: every renderer formats alike.
struct CaseCells {
  std::string verdict, median, gbps, tflops, peak, speedup, interval, max_abs, max_rel, tolerance_used;
};
CaseCells case_cells(const TestResult& t);

// The console's table: a header per op, a line per case with its shapes, then one row per
// implementation in aligned columns. "" when no test ran.
std::string case_table_text(const RunRecord& run);

// tests.csv: one row per test (SKIPPED ones too, with their reason), the figures as plain
// numbers (empty for none), RFC 4180 quoting and CRLF line ends as operator_summary.csv.
std::string tests_csv(const RunRecord& run);

}  // namespace bb
