// backendbench compare BASE NEW: a run against an earlier one, or against the last runs of a
// store of them (run_store.hpp) with each test's trend (regression.hpp decides; this reads the
// runs, prints and writes the comparison, and picks the exit status).
//
//   0  no regression     3  a regression (correctness or performance)     2  unusable input
#include <stdlib.h>

#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli.hpp"
#include "commands.hpp"
#include "confirm.hpp"
#include "regression.hpp"
#include "report/report_files.hpp"
#include "run_files.hpp"
#include "run_record.hpp"
#include "run_store.hpp"

namespace bb {

int compare_command(CLI::App& app, const CommandContext& ctx) {
  app.description("Compares two runs test by test (op/impl/case): exit 3 when a test that passed in BASE does not pass in NEW, "
               "or is slower beyond the threshold and both runs' noise; 0 otherwise; 2 when a run cannot be read");
  std::string base_path, next_path, md_file, format = "text";
  CompareOptions options;
  std::size_t max_rows = 0;
  app.add_option("BASE", base_path,
                 "the earlier run: a results.json, a results.jsonl, or a log dir; or a store: a folder of earlier runs' log dirs "
                 "(NEW is judged against the last --last of them together, and each test's trend over them is shown)")
      ->required();
  std::size_t last = 7;
  app.add_option("--last", last, "with a store as BASE: how many of its newest runs to compare with (default 7)")->check(CLI::PositiveNumber);
  std::string trend_csv_file;
  app.add_option("--trend-csv", trend_csv_file, "with a store as BASE: also write each test's median in every run compared with, and NEW's, as CSV to FILE");
  app.add_option("NEW", next_path, "the run to judge: a results.json, a results.jsonl, or a log dir")->required();
  app.add_option("--threshold", options.threshold_pct, "a slowdown of at most PCT percent is never a regression (default 5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--md", md_file, "also write the comparison as Markdown to FILE");
  std::string html_file;
  app.add_option("--html", html_file, "also write NEW's HTML report with the comparison in it (its regressions listed) to FILE");
  app.add_option("--format", format, "what to print: text (a table) or md (the Markdown)")->check(CLI::IsMember({"text", "md"}));
  app.add_option("--max-rows", max_rows, "list at most N changed tests (regressions come first; default: all)");
  app.add_flag("--skip-is-regression", options.skip_is_regression, "a test that passed in BASE and is SKIPPED in NEW is a regression");
  bool confirm = false;
  app.add_flag("--confirm", confirm,
               "re-time each performance regression now, NEW's library against BASE's, paired (from the copies the runs kept by "
               "hash); report only those the paired interval confirms");
  std::string confirm_dir;
  app.add_option("--confirm-dir", confirm_dir, "where --confirm's roots and logs go (default: a temporary folder, removed after)");
  if (auto status = parse_command(app, ctx)) return *status;

  // Both runs are read before anything is said: either is enough to make the input unusable.
  // A store as BASE (run_store.hpp): its last runs together stand for one.
  auto next = load_run(next_path);
  std::optional<RunStore> store;
  Expected<RunRecord> base = make_error("");
  if (is_run_store(base_path)) {
    auto s = load_run_store(base_path, last, next_path, next ? next->started_at : "");
    if (s) {
      store = std::move(*s);
      base = store_baseline(*store);
    } else {
      base = s.error();
    }
  } else {
    if (!trend_csv_file.empty()) {
      fmt::print(stderr, "error: compare: --trend-csv needs a store as BASE (a folder of earlier runs' log dirs), not {}\n", base_path);
      return 2;
    }
    base = load_run(base_path);
  }
  bool unusable = false;
  if (!base) {
    fmt::print(stderr, "error: compare: BASE {}\n", base.error().message);
    unusable = true;
  }
  if (!next) {
    fmt::print(stderr, "error: compare: NEW {}\n", next.error().message);
    unusable = true;
  }
  if (unusable) return 2;
  if (base->schema_version != next->schema_version) {  // load_run accepts one version only; say it anyway
    fmt::print(stderr, "error: compare: BASE {} has schema_version {}, NEW {} has {}: results of different versions\n", base_path,
               base->schema_version, next_path, next->schema_version);
    return 2;
  }

  RunComparison c = compare_runs(*base, *next, options);
  std::vector<TestTrend> trends;
  if (store) {
    std::vector<std::string> runs;
    for (const auto& r : store->runs) runs.push_back(r.path.filename().string());
    c.notes.insert(c.notes.begin(), fmt::format("BASE is the last {} run(s) of the store {} together ({}): each test's median the median of "
                                                "theirs, its noise and range spanning every one",
                                                store->runs.size(), base_path, fmt::join(runs, ", ")));
    for (const auto& s : store->skipped) c.notes.push_back("the store's entry could not be read, left out: " + s);
    trends = test_trends(*store, *next);
  }
  if (confirm) {
    ConfirmOptions co;
    co.binary = ctx.self.string();
    std::filesystem::path temp;
    if (confirm_dir.empty()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "backendbench-confirm-XXXXXX").string();
      if (!mkdtemp(pattern.data())) {
        fmt::print(stderr, "error: compare --confirm: cannot make a folder in {}\n", std::filesystem::temp_directory_path().string());
        return 2;
      }
      temp = co.work = pattern;
    } else {
      co.work = confirm_dir;
      std::error_code ec;
      std::filesystem::create_directories(co.work, ec);
    }
    const int retimed = confirm_regressions(c, *base, *next, co);
    c.notes.push_back(fmt::format("--confirm re-timed {} implementation(s) on this machine, paired: {} regression(s) stand", retimed,
                                  c.regressions()));
    if (!temp.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(temp, ec);
    }
  }
  const CompareText labels{store ? fmt::format("{} (its last {} runs)", base_path, store->runs.size()) : base_path, next_path, max_rows};
  std::string markdown = comparison_markdown(c, *base, *next, labels);
  if (store) markdown += "\n" + trend_markdown(*store, trends, max_rows);
  std::string text = format == "md" ? markdown : comparison_text(c, *base, *next, labels);
  if (store && format != "md") text += "\n" + trend_text(*store, trends, max_rows);
  fmt::print("{}", text);
  std::fflush(stdout);
  if (!trend_csv_file.empty())
    if (auto st = write_file_atomically(trend_csv_file, trend_csv(*store, trends)); !st) {
      fmt::print(stderr, "error: compare: --trend-csv {}\n", st.error().message);
      return 2;
    }
  if (!md_file.empty()) {
    if (auto st = write_file_atomically(md_file, markdown); !st) {
      fmt::print(stderr, "error: compare: --md {}\n", st.error().message);
      return 2;
    }
  }
  if (!html_file.empty()) {
    ReportComparison rc{labels.base_label, &c, store ? &trends : nullptr, {}};
    if (store)
      for (const auto& r : store->runs) rc.trend_runs.push_back(r.path.filename().string());
    if (auto st = write_file_atomically(html_file, html_report(*next, &rc)); !st) {
      fmt::print(stderr, "error: compare: --html {}\n", st.error().message);
      return 2;
    }
  }
  return c.has_regression() ? 3 : 0;
}

}  // namespace bb
