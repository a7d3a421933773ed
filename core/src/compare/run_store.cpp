#include "compare/run_store.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "measure/stats.hpp"
#include "report/escape.hpp"
#include "report/report_text.hpp"
#include "run_files.hpp"

namespace bb {

namespace {

// A folder's own results file, as load_run would read it.
bool holds_results(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "results.json", ec) || std::filesystem::exists(dir / "results.jsonl", ec);
}

bool is_results_file(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name == "results.json" || name == "results.jsonl" ||
         (p.extension() == ".json" && name.find("results") != std::string::npos);
}

std::string key_of(const TestResult& t) { return t.id.op + "/" + t.id.impl + "/" + t.id.case_id; }

// Each stored run's tests folded by key (their repeats together).
std::vector<std::unordered_map<std::string, TestSummary>> summaries(const RunStore& store) {
  std::vector<std::unordered_map<std::string, TestSummary>> out;
  for (const auto& r : store.runs) {
    auto& m = out.emplace_back();
    for (auto& s : summarize_tests(r.run.tests)) m.emplace(s.key(), std::move(s));
  }
  return out;
}

// A median as the reports print one, "-" where the run did not time the test.
std::string seconds_text(std::optional<double> s) { return s ? format_seconds(*s) : "-"; }

std::string run_label(const StoredRun& r) {
  return r.run.started_at.empty() ? r.path.filename().string() : r.run.started_at.substr(0, std::min<std::size_t>(16, r.run.started_at.size()));
}

std::vector<const TestTrend*> listed(const std::vector<TestTrend>& trends, std::size_t max_rows) {
  std::vector<const TestTrend*> rows;
  for (const auto& t : trends)
    if (t.new_high || t.new_low) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const TestTrend* a, const TestTrend* b) {
    if (a->new_high != b->new_high) return a->new_high;  // slowdowns first
    return std::abs(a->vs_median.value_or(0)) > std::abs(b->vs_median.value_or(0));
  });
  if (max_rows > 0 && rows.size() > max_rows) rows.resize(max_rows);
  return rows;
}

}  // namespace

bool is_run_store(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) || holds_results(path)) return false;
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    if ((e.is_directory(ec) && holds_results(e.path())) || (e.is_regular_file(ec) && is_results_file(e.path()))) return true;
  return false;
}

Expected<RunStore> load_run_store(const std::filesystem::path& dir, std::size_t last, const std::filesystem::path& exclude,
                                  const std::string& exclude_started_at) {
  std::error_code ec;
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if ((e.is_directory(ec) && holds_results(e.path())) || (e.is_regular_file(ec) && is_results_file(e.path()))) entries.push_back(e.path());
  if (ec) return make_error(fmt::format("{}: cannot list the store: {}", dir.string(), ec.message()));
  RunStore store;
  const auto same_as_exclude = [&](const std::filesystem::path& p) {
    if (exclude.empty()) return false;
    std::error_code e1;
    return std::filesystem::equivalent(p, exclude, e1) || std::filesystem::equivalent(run_file(p), run_file(exclude), e1);
  };
  for (const auto& p : entries) {
    if (same_as_exclude(p)) continue;
    auto run = load_run(p);
    if (!run) {
      store.skipped.push_back(run.error().message);
      continue;
    }
    if (!exclude_started_at.empty() && run->started_at == exclude_started_at) continue;  // NEW, copied into the store
    store.runs.push_back({p, std::move(*run)});
  }
  // Oldest first: by when each run started (ISO 8601 sorts as text), then by name.
  std::stable_sort(store.runs.begin(), store.runs.end(), [](const StoredRun& a, const StoredRun& b) {
    if (a.run.started_at != b.run.started_at) return a.run.started_at < b.run.started_at;
    return a.path.filename() < b.path.filename();
  });
  if (last > 0 && store.runs.size() > last) store.runs.erase(store.runs.begin(), store.runs.end() - static_cast<std::ptrdiff_t>(last));
  if (store.runs.empty()) {
    std::string why = entries.empty() ? "no entry holds a results.json or results.jsonl" : "none of its runs could be read";
    for (const auto& s : store.skipped) why += "; " + s;
    return make_error(fmt::format("{}: a store of runs with no run to compare with: {}", dir.string(), why));
  }
  return store;
}

RunRecord store_baseline(const RunStore& store) {
  RunRecord base = store.runs.back().run;  // the newest: its record, its verdicts
  const auto folded = summaries(store);
  std::vector<TestResult> tests;
  for (const auto& t : base.tests) {
    if (t.id.repeat != 0) continue;  // one test per key: its repeats are folded below
    TestResult r = t;
    const std::string key = key_of(t);
    std::vector<double> medians;
    double q1 = 0, q3 = 0, noise = 0;
    std::size_t samples = 0;
    for (const auto& m : folded) {
      auto it = m.find(key);
      if (it == m.end() || !it->second.timing || !usable_timing(*it->second.timing)) continue;
      const TimingSummary& s = *it->second.timing;
      q1 = medians.empty() ? s.q1 : std::min(q1, s.q1);
      q3 = medians.empty() ? s.q3 : std::max(q3, s.q3);
      noise = std::max(noise, std::isfinite(s.rel_stdev) ? s.rel_stdev : 0.0);
      samples += s.samples;
      medians.push_back(s.median);
    }
    if (!medians.empty() && r.performance.timing) {
      const SampleStats spread = summarize(medians);
      SampleStats& st = r.performance.timing->stats;
      st.median = spread.median;
      st.q1 = q1;
      st.q3 = q3;
      st.iqr = q3 - q1;
      st.rel_stdev = std::max(noise, medians.size() > 1 ? spread.rel_stdev : 0.0);
      st.samples = samples;
    }
    tests.push_back(std::move(r));
  }
  base.tests = std::move(tests);
  base.repeats = 1;
  return base;
}

std::vector<TestTrend> test_trends(const RunStore& store, const RunRecord& next) {
  const auto folded = summaries(store);
  std::vector<TestTrend> out;
  for (const auto& s : summarize_tests(next.tests)) {
    TestTrend t;
    t.key = s.key();
    t.op = s.op;
    t.impl = s.impl;
    t.case_id = s.case_id;
    std::vector<double> stored;
    for (const auto& m : folded) {
      auto it = m.find(t.key);
      if (it != m.end() && it->second.timing && usable_timing(*it->second.timing)) {
        t.medians.push_back(it->second.timing->median);
        stored.push_back(it->second.timing->median);
      } else {
        t.medians.emplace_back();
      }
    }
    const bool timed = s.timing && usable_timing(*s.timing);
    t.medians.push_back(timed ? std::optional<double>(s.timing->median) : std::nullopt);
    if (timed && !stored.empty()) {
      const double m = median_of(stored);
      t.vs_median = (s.timing->median - m) / m;
      // A new high or low needs a trend to stand out from: two earlier runs at least.
      t.new_high = stored.size() >= 2 && s.timing->median > *std::max_element(stored.begin(), stored.end());
      t.new_low = stored.size() >= 2 && s.timing->median < *std::min_element(stored.begin(), stored.end());
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string trend_text(const RunStore& store, const std::vector<TestTrend>& trends, std::size_t max_rows) {
  std::string out = fmt::format("Trend over the last {} run(s) of the store (oldest first, then NEW): ", store.runs.size());
  std::vector<std::string> labels;
  for (const auto& r : store.runs) labels.push_back(run_label(r));
  out += fmt::format("{}\n", fmt::join(labels, ", "));
  const auto rows = listed(trends, max_rows);
  int highs = 0, lows = 0;
  for (const auto& t : trends) highs += t.new_high, lows += t.new_low;
  if (rows.empty()) return out + "  no test's median is above or below every earlier run's\n";
  for (const auto* t : rows) {
    std::vector<std::string> cells;
    for (const auto& m : t->medians) cells.push_back(seconds_text(m));
    out += fmt::format("  {:<9} {}  {:+.1f}% against their median  [{}]\n", t->new_high ? "NEW HIGH" : "NEW LOW", t->key,
                       t->vs_median.value_or(0) * 100, fmt::join(cells, " -> "));
  }
  out += fmt::format("  {} test(s) slower than in every earlier run, {} faster than in every one (a new high is a regression only where "
                     "the comparison above says so)\n",
                     highs, lows);
  return out;
}

std::string trend_markdown(const RunStore& store, const std::vector<TestTrend>& trends, std::size_t max_rows) {
  std::string out = fmt::format("### Trend over the last {} run(s)\n\n", store.runs.size());
  const auto rows = listed(trends, max_rows);
  if (rows.empty()) return out + "No test's median is above or below every earlier run's.\n";
  out += "| | test | vs median |";
  for (const auto& r : store.runs) out += fmt::format(" {} |", run_label(r));
  out += " NEW |\n|---|---|---|";
  for (std::size_t i = 0; i <= store.runs.size(); ++i) out += "---|";
  out += "\n";
  for (const auto* t : rows) {
    out += fmt::format("| {} | `{}` | {:+.1f}% |", t->new_high ? "new high" : "new low", t->key, t->vs_median.value_or(0) * 100);
    for (const auto& m : t->medians) out += fmt::format(" {} |", seconds_text(m));
    out += "\n";
  }
  return out;
}

std::string trend_csv(const RunStore& store, const std::vector<TestTrend>& trends) {
  std::string out = "op,impl,case";
  for (const auto& r : store.runs) out += "," + csv_field(fmt::format("median_s {}", run_label(r)));
  out += ",median_s NEW,vs_median,new_high,new_low\n";
  for (const auto& t : trends) {
    out += fmt::format("{},{},{}", csv_field(t.op), csv_field(t.impl), csv_field(t.case_id));
    for (const auto& m : t.medians) out += m ? fmt::format(",{:.9g}", *m) : std::string(",");
    out += t.vs_median ? fmt::format(",{:.6g}", *t.vs_median) : std::string(",");
    out += fmt::format(",{},{}\n", t.new_high ? "true" : "false", t.new_low ? "true" : "false");
  }
  return out;
}

}  // namespace bb
