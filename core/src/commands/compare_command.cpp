// backendbench compare BASE NEW: a run against an earlier one, or against the last runs of a
// store of them (run_store.hpp) with each test's trend (regression.hpp decides; this reads the
// runs, prints and writes the comparison, and picks the exit status).
//
//   0  no regression     3  a regression (correctness or performance)     2  unusable input
#include <stdlib.h>

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands/cli.hpp"
#include "commands/commands.hpp"
#include "compare/confirm.hpp"
#include "compare/regression.hpp"
#include "compare/run_store.hpp"
#include "report/report_files.hpp"
#include "run_files.hpp"
#include "run_record.hpp"

namespace bb {

namespace {

struct CompareArgs {
  std::string base_path, next_path, md_file, html_file, trend_csv_file, confirm_dir, format = "text";
  CompareOptions options;
  std::size_t max_rows = 0, last = 7;
  bool confirm = false;
};

void add_compare_options(CLI::App& app, CompareArgs& a) {
  app.description("Compares two runs test by test (op/impl/case): exit 3 when a test that passed in BASE does not pass in NEW, "
               "or is slower beyond the threshold and both runs' noise; 0 otherwise; 2 when a run cannot be read");
  app.add_option("BASE", a.base_path,
                 "the earlier run: a results.json, a results.jsonl, or a log dir; or a store: a folder of earlier runs' log dirs "
                 "(NEW is judged against the last --last of them together, and each test's trend over them is shown)")
      ->required();
  app.add_option("--last", a.last, "with a store as BASE: how many of its newest runs to compare with (default 7)")->check(CLI::PositiveNumber);
  app.add_option("--trend-csv", a.trend_csv_file, "with a store as BASE: also write each test's median in every run compared with, and NEW's, as CSV to FILE");
  app.add_option("NEW", a.next_path, "the run to judge: a results.json, a results.jsonl, or a log dir")->required();
  app.add_option("--threshold", a.options.threshold_pct, "a slowdown of at most PCT percent is never a regression (default 5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--md", a.md_file, "also write the comparison as Markdown to FILE");
  app.add_option("--html", a.html_file, "also write NEW's HTML report with the comparison in it (its regressions listed) to FILE");
  app.add_option("--format", a.format, "what to print: text (a table) or md (the Markdown)")->check(CLI::IsMember({"text", "md"}));
  app.add_option("--max-rows", a.max_rows, "list at most N changed tests (regressions come first; default: all)");
  app.add_flag("--skip-is-regression", a.options.skip_is_regression, "a test that passed in BASE and is SKIPPED in NEW is a regression");
  app.add_flag("--confirm", a.confirm,
               "re-time each performance regression now, NEW's library against BASE's, paired (from the copies the runs kept by "
               "hash); report only those the paired interval confirms");
  app.add_option("--confirm-dir", a.confirm_dir, "where --confirm's roots and logs go (default: a temporary folder, removed after)");
}

// The two runs (a store as BASE: its last runs together stand for one), both read before anything
// is said: either is enough to make the input unusable. nullopt where they cannot be compared (said).
struct Compared {
  RunRecord base, next;
  std::optional<RunStore> store;
};
std::optional<Compared> load_compared(const CompareArgs& a) {
  auto next = load_run(a.next_path);
  std::optional<RunStore> store;
  Expected<RunRecord> base = make_error("");
  if (is_run_store(a.base_path)) {
    auto s = load_run_store(a.base_path, a.last, a.next_path, next ? next->started_at : "");
    if (s) {
      store = std::move(*s);
      base = store_baseline(*store);
    } else {
      base = s.error();
    }
  } else {
    if (!a.trend_csv_file.empty()) {
      fmt::print(stderr, "error: compare: --trend-csv needs a store as BASE (a folder of earlier runs' log dirs), not {}\n", a.base_path);
      return std::nullopt;
    }
    base = load_run(a.base_path);
  }
  if (!base) fmt::print(stderr, "error: compare: BASE {}\n", base.error().message);
  if (!next) fmt::print(stderr, "error: compare: NEW {}\n", next.error().message);
  if (!base || !next) return std::nullopt;
  if (base->schema_version != next->schema_version) {  // load_run accepts one version only; say it anyway
    fmt::print(stderr, "error: compare: BASE {} has schema_version {}, NEW {} has {}: results of different versions\n", a.base_path,
               base->schema_version, a.next_path, next->schema_version);
    return std::nullopt;
  }
  return Compared{std::move(*base), std::move(*next), std::move(store)};
}

// --confirm: each regression re-timed now, paired, in a folder of its own. False where none could be made.
bool confirm_now(const CompareArgs& a, const CommandContext& ctx, const Compared& runs, RunComparison& c) {
  ConfirmOptions co;
  co.binary = ctx.self.string();
  std::filesystem::path temp;
  if (a.confirm_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "backendbench-confirm-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      fmt::print(stderr, "error: compare --confirm: cannot make a folder in {}\n", std::filesystem::temp_directory_path().string());
      return false;
    }
    temp = co.work = pattern;
  } else {
    co.work = a.confirm_dir;
    std::error_code ec;
    std::filesystem::create_directories(co.work, ec);
  }
  const int retimed = confirm_regressions(c, runs.base, runs.next, co);
  c.notes.push_back(fmt::format("--confirm re-timed {} implementation(s) on this machine, paired: {} regression(s) stand", retimed,
                                c.regressions()));
  if (!temp.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp, ec);
  }
  return true;
}

// Writes `text` to `file` where one was asked for; false (said) where it could not.
bool write_asked(const std::string& file, const char* flag, const std::string& text) {
  if (file.empty()) return true;
  if (auto st = write_file_atomically(file, text); !st) {
    fmt::print(stderr, "error: compare: {} {}\n", flag, st.error().message);
    return false;
  }
  return true;
}

}  // namespace

int compare_command(CLI::App& app, const CommandContext& ctx) {
  CompareArgs a;
  add_compare_options(app, a);
  if (auto status = parse_command(app, ctx)) return *status;
  auto runs = load_compared(a);
  if (!runs) return 2;
  const auto& store = runs->store;

  RunComparison c = compare_runs(runs->base, runs->next, a.options);
  std::vector<TestTrend> trends;
  if (store) {
    std::vector<std::string> names;
    for (const auto& r : store->runs) names.push_back(r.path.filename().string());
    c.notes.insert(c.notes.begin(), fmt::format("BASE is the last {} run(s) of the store {} together ({}): each test's median the median of "
                                                "theirs, its noise and range spanning every one",
                                                store->runs.size(), a.base_path, fmt::join(names, ", ")));
    for (const auto& s : store->skipped) c.notes.push_back("the store's entry could not be read, left out: " + s);
    trends = test_trends(*store, runs->next);
  }
  if (a.confirm && !confirm_now(a, ctx, *runs, c)) return 2;
  const CompareText labels{store ? fmt::format("{} (its last {} runs)", a.base_path, store->runs.size()) : a.base_path, a.next_path,
                           a.max_rows};
  std::string markdown = comparison_markdown(c, runs->base, runs->next, labels);
  if (store) markdown += "\n" + trend_markdown(*store, trends, a.max_rows);
  std::string text = a.format == "md" ? markdown : comparison_text(c, runs->base, runs->next, labels);
  if (store && a.format != "md") text += "\n" + trend_text(*store, trends, a.max_rows);
  fmt::print("{}", text);
  std::fflush(stdout);
  // The CSV is made only where asked (a store's trends over many runs are not free to render).
  if (!write_asked(a.trend_csv_file, "--trend-csv", store && !a.trend_csv_file.empty() ? trend_csv(*store, trends) : "") ||
      !write_asked(a.md_file, "--md", markdown))
    return 2;
  if (!a.html_file.empty()) {
    ReportComparison rc{labels.base_label, &c, store ? &trends : nullptr, {}};
    if (store)
      for (const auto& r : store->runs) rc.trend_runs.push_back(r.path.filename().string());
    if (!write_asked(a.html_file, "--html", html_report(runs->next, &rc))) return 2;
  }
  return c.has_regression() ? 3 : 0;
}

}  // namespace bb
