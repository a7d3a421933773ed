#include "compare/regression.hpp"

#include <set>

#include "devices/host_load.hpp"
#include "report/escape.hpp"
#include "report/report_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "measure/stats.hpp"

namespace bb {

namespace {


// The repeats of one test, timed, folded into one timing (regression.hpp says how).
std::optional<TimingSummary> fold_timings(const std::vector<const TestResult*>& repeats) {
  std::vector<const Timing*> timed;
  for (const auto* r : repeats)
    if (r->performance.timing && r->performance.timing->stats.samples > 0 && std::isfinite(r->performance.timing->stats.median) && r->performance.timing->stats.median > 0)
      timed.push_back(&*r->performance.timing);
  if (timed.empty()) return std::nullopt;
  TimingSummary t;
  t.mode = timed.front()->mode;
  t.repeats = static_cast<int>(timed.size());
  if (timed.size() == 1) {
    const auto& s = timed.front()->stats;
    t.median = s.median;
    t.q1 = s.q1;
    t.q3 = s.q3;
    t.rel_stdev = s.rel_stdev;
    t.samples = s.samples;
    return t;
  }
  std::vector<double> medians, noises;
  t.q1 = timed.front()->stats.q1;
  t.q3 = timed.front()->stats.q3;
  for (const auto* x : timed) {
    medians.push_back(x->stats.median);
    noises.push_back(x->stats.rel_stdev);
    t.q1 = std::min(t.q1, x->stats.q1);
    t.q3 = std::max(t.q3, x->stats.q3);
    t.samples += x->stats.samples;
  }
  t.median = median_of(medians);
  // Pass-to-pass drift counts as noise: the spread of the medians, beside the samples' own.
  const SampleStats between = summarize(medians);
  t.rel_stdev = std::max(median_of(noises), between.rel_stdev);
  return t;
}

bool quartiles_known(const TimingSummary& t) { return t.q1 > 0 && t.q1 <= t.median && t.median <= t.q3 && std::isfinite(t.q3); }

std::string percent(double rel) { return fmt::format("{:+.1f}%", rel * 100); }

}  // namespace

std::vector<TestSummary> summarize_tests(const std::vector<TestResult>& tests) {
  std::vector<std::vector<const TestResult*>> groups;
  std::unordered_map<std::string, std::size_t> where;
  for (const auto& t : tests) {
    const std::string key = t.id.op + "/" + t.id.impl + "/" + t.id.case_id;
    auto [it, fresh] = where.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&t);
  }
  std::vector<TestSummary> out;
  out.reserve(groups.size());
  for (auto& g : groups) {
    std::stable_sort(g.begin(), g.end(), [](const TestResult* a, const TestResult* b) { return a->id.repeat < b->id.repeat; });
    TestSummary s;
    s.op = g.front()->id.op;
    s.impl = g.front()->id.impl;
    s.case_id = g.front()->id.case_id;
    s.repeats = static_cast<int>(g.size());
    int skipped = 0;
    const TestResult* failing = nullptr;
    for (const auto* r : g) {
      if (r->outcome.verdict == Verdict::pass) ++s.passed;
      else if (r->outcome.verdict == Verdict::skipped) ++skipped;
      else if (!failing) failing = r;
    }
    if (failing) {
      s.verdict = failing->outcome.verdict;
      s.message = s.repeats > 1 ? fmt::format("repeat {}: {}", failing->id.repeat + 1, failing->outcome.message) : failing->outcome.message;
    } else if (s.passed == s.repeats) {
      s.verdict = Verdict::pass;
    } else {
      // Every repeat SKIPPED, or some passed and the others were SKIPPED: not a pass.
      s.verdict = Verdict::skipped;
      const auto* first_skip = *std::find_if(g.begin(), g.end(), [](const TestResult* r) { return r->outcome.verdict == Verdict::skipped; });
      s.message = skipped == s.repeats ? first_skip->outcome.message
                                       : fmt::format("{} of {} repeats SKIPPED: {}", skipped, s.repeats, first_skip->outcome.message);
    }
    s.timing = fold_timings(g);
    out.push_back(std::move(s));
  }
  return out;
}

bool usable_timing(const TimingSummary& t) { return t.samples > 0 && std::isfinite(t.median) && t.median > 0; }

TimingDecision compare_timing(const TimingSummary& base, const TimingSummary& next, double threshold_pct) {
  TimingDecision d;
  d.relative = (next.median - base.median) / base.median;
  const double threshold = threshold_pct / 100.0;
  if (std::fabs(d.relative) <= threshold) return d;  // same
  auto held_back = [&](std::string why) {
    d.change = TimingChange::inconclusive;
    d.why = std::move(why);
    return d;
  };
  if (!base.mode.empty() && !next.mode.empty() && base.mode != next.mode)
    return held_back(fmt::format("timed {} in BASE, {} in NEW: not comparable", base.mode, next.mode));
  if (!std::isfinite(base.rel_stdev) || !std::isfinite(next.rel_stdev)) return held_back("noise unknown");
  const double noise = std::max(base.rel_stdev, next.rel_stdev);
  if (std::fabs(d.relative) <= noise) return held_back(fmt::format("within the noise (±{:.1f}%)", noise * 100));
  if (!quartiles_known(base) || !quartiles_known(next)) return held_back("no quartiles to tell the distributions apart");
  const bool slower = d.relative > 0;
  if (slower ? next.q1 <= base.q3 : next.q3 >= base.q1)
    return held_back(slower ? "the interquartile ranges overlap (NEW q1 <= BASE q3)" : "the interquartile ranges overlap (NEW q3 >= BASE q1)");
  d.change = slower ? TimingChange::slower : TimingChange::faster;
  return d;
}

const char* change_kind_name(ChangeKind k) {
  switch (k) {
    case ChangeKind::correctness_regression: return "REGRESSION";
    case ChangeKind::slower: return "SLOWER";
    case ChangeKind::lost_coverage: return "LOST COVERAGE";
    case ChangeKind::inconclusive: return "INCONCLUSIVE";
    case ChangeKind::timed_once: return "TIMED ONCE";
    case ChangeKind::faster: return "FASTER";
    case ChangeKind::fixed: return "FIXED";
    case ChangeKind::new_test: return "NEW";
    case ChangeKind::removed_test: return "REMOVED";
    case ChangeKind::still_failing: return "STILL FAILING";
    case ChangeKind::unchanged: return "UNCHANGED";
  }
  return "?";
}

int RunComparison::count(ChangeKind k) const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [&](const Change& c) { return c.kind == k; }));
}

int RunComparison::regressions() const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [](const Change& c) { return c.regression; }));
}

namespace {

Change classify(const TestSummary& b, const TestSummary& n, const CompareOptions& options) {
  Change c;
  c.key = b.key();
  c.op = b.op;
  c.impl = b.impl;
  c.base = b;
  c.next = n;
  const bool bp = b.verdict == Verdict::pass, np = n.verdict == Verdict::pass;
  if (bp && !np && n.verdict != Verdict::skipped) {
    c.kind = ChangeKind::correctness_regression;
    c.regression = true;
    c.note = n.message;
  } else if (bp && !np) {
    c.kind = ChangeKind::lost_coverage;
    c.regression = options.skip_is_regression;
    c.note = n.message;
  } else if (!bp && np) {
    c.kind = ChangeKind::fixed;
    c.note = fmt::format("was {}", verdict_name(b.verdict));
  } else if (!bp) {
    c.kind = n.verdict == Verdict::skipped ? ChangeKind::unchanged : ChangeKind::still_failing;
    c.note = n.message;
  } else {
    const bool bt = b.timing && usable_timing(*b.timing), nt = n.timing && usable_timing(*n.timing);
    if (bt && nt) {
      const auto d = compare_timing(*b.timing, *n.timing, options.threshold_pct);
      c.relative = d.relative;
      c.note = d.why;
      c.kind = d.change == TimingChange::slower         ? ChangeKind::slower
               : d.change == TimingChange::faster       ? ChangeKind::faster
               : d.change == TimingChange::inconclusive ? ChangeKind::inconclusive
                                                        : ChangeKind::unchanged;
      c.regression = c.kind == ChangeKind::slower;
    } else if (bt || nt) {
      c.kind = ChangeKind::timed_once;
      c.note = bt ? "timed in BASE only" : "timed in NEW only";
    }
  }
  return c;
}

std::string hostname(const RunRecord& r) { return r.host.is_object() ? r.host.value("hostname", "") : ""; }

std::string commit(const RunRecord& r) {
  if (!r.provenance.is_object()) return "";
  const auto tool = r.provenance.find("tool");
  if (tool == r.provenance.end() || !tool->is_object()) return "";
  return tool->value("commit", "");
}

}  // namespace

RunComparison compare_runs(const RunRecord& base, const RunRecord& next, const CompareOptions& options) {
  RunComparison out;
  out.options = options;
  const auto bs = summarize_tests(base.tests);
  const auto ns = summarize_tests(next.tests);
  std::unordered_map<std::string, std::size_t> in_next;
  for (std::size_t i = 0; i < ns.size(); ++i) in_next.emplace(ns[i].key(), i);
  std::vector<bool> matched(ns.size(), false);

  // Speedups of NEW over BASE per implementation, over the tests both passed and timed.
  std::map<std::pair<std::string, std::string>, std::vector<double>> ratios;
  std::vector<std::pair<std::string, std::string>> impl_order;
  std::vector<double> all_ratios;

  for (const auto& b : bs) {
    const auto it = in_next.find(b.key());
    if (it == in_next.end()) {
      Change c;
      c.kind = ChangeKind::removed_test;
      c.key = b.key();
      c.op = b.op;
      c.impl = b.impl;
      c.base = b;
      c.note = "not in NEW";
      out.changes.push_back(std::move(c));
      continue;
    }
    matched[it->second] = true;
    const auto& n = ns[it->second];
    out.changes.push_back(classify(b, n, options));
    if (b.verdict == Verdict::pass && n.verdict == Verdict::pass && b.timing && n.timing && usable_timing(*b.timing) &&
        usable_timing(*n.timing)) {
      auto& v = ratios[{b.op, b.impl}];
      if (v.empty()) impl_order.emplace_back(b.op, b.impl);
      v.push_back(b.timing->median / n.timing->median);
      all_ratios.push_back(v.back());
    }
  }
  for (std::size_t i = 0; i < ns.size(); ++i) {
    if (matched[i]) continue;
    Change c;
    c.kind = ChangeKind::new_test;
    c.key = ns[i].key();
    c.op = ns[i].op;
    c.impl = ns[i].impl;
    c.next = ns[i];
    c.note = "not in BASE";
    out.changes.push_back(std::move(c));
  }
  for (const auto& [op, impl] : impl_order) {
    const auto& v = ratios[{op, impl}];
    out.impls.push_back({op, impl, static_cast<int>(v.size()), geomean(v).value_or(1.0)});
  }
  if (!all_ratios.empty()) out.overall = ImplSpeedup{"", "", static_cast<int>(all_ratios.size()), geomean(all_ratios).value_or(1.0)};

  // Regressions first; then by kind; the largest slowdowns and speedups first; else run order.
  std::stable_sort(out.changes.begin(), out.changes.end(), [](const Change& a, const Change& b) {
    if (a.regression != b.regression) return a.regression;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.relative && b.relative) return a.kind == ChangeKind::faster ? *a.relative < *b.relative : *a.relative > *b.relative;
    return false;
  });

  // What the reader should know about the runs themselves.
  if (!base.complete) out.notes.push_back("BASE did not finish (read from its results.jsonl): its missing tests show as NEW");
  if (!next.complete) out.notes.push_back("NEW did not finish (read from its results.jsonl): its missing tests show as REMOVED");
  if (hostname(base) != hostname(next) && !hostname(base).empty() && !hostname(next).empty())
    out.notes.push_back(fmt::format("the runs are from different hosts ({} and {}): timings may differ for that alone", hostname(base),
                                    hostname(next)));
  if (base.repeats != next.repeats)
    out.notes.push_back(fmt::format("BASE ran {} repeat(s), NEW {}: repeats are folded into one test each", base.repeats, next.repeats));
  // A busy host makes unchanged code read slow: say which run was disturbed, and by what.
  for (const auto& [name, run] : {std::pair<const char*, const RunRecord*>{"BASE", &base}, {"NEW", &next}})
    for (const auto& d : disturbances(run->host_load))
      out.notes.push_back(fmt::format("{} was disturbed: {}; its timings may read slow for that alone (--confirm re-times)", name, d));
  // Which libraries changed between the runs: a slowdown of a library that did not change is
  // the host's or the inputs', not the code's.
  std::set<std::string> changed_libraries;
  for (auto& c : out.changes) {
    const auto b = library_of(base, c.op, c.impl), n = library_of(next, c.op, c.impl);
    if (!b || !n || b->sha256.empty() || n->sha256.empty()) continue;
    c.library_changed = b->sha256 != n->sha256;
    if (c.library_changed) changed_libraries.insert(fmt::format("{} ({}... -> {}...)", n->path, b->sha256.substr(0, 12), n->sha256.substr(0, 12)));
    if (c.kind == ChangeKind::slower)
      c.note += std::string(c.note.empty() ? "" : "; ") + (c.library_changed ? "its library changed" : "its library did not change (the same sha256)");
  }
  if (!changed_libraries.empty())
    out.notes.push_back(fmt::format("libraries that changed between the runs: {}", fmt::join(changed_libraries, ", ")));
  return out;
}

std::optional<RunLibrary> library_of(const RunRecord& run, const std::string& op, const std::string& impl) {
  if (!run.provenance.is_object()) return std::nullopt;
  const std::string stem = impl.rfind(op + "__", 0) == 0 ? impl.substr(op.size() + 2) : impl;
  for (const auto& p : run.provenance.value("plugins", nlohmann::json::array())) {
    if (p.value("op", "") != op) continue;
    const std::filesystem::path path = p.value("path", "");
    if (path.stem().string() != stem) continue;
    RunLibrary l;
    l.path = path.string();
    l.sha256 = p.value("sha256", nlohmann::json()).is_string() ? p["sha256"].get<std::string>() : "";
    return l;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Rendering.

namespace {

struct Row {
  std::string status, test, base, next, change, note;
};

std::string one_line(std::string s, std::size_t max = 100) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

std::string cell(const std::optional<TestSummary>& t, bool timing) {
  if (!t) return "-";
  if (timing && t->timing && usable_timing(*t->timing)) {
    const auto& x = *t->timing;
    std::string s = format_seconds(x.median);
    if (std::isfinite(x.rel_stdev)) s += fmt::format(" ±{:.1f}%", x.rel_stdev * 100);
    if (t->verdict != Verdict::pass) s = std::string(verdict_name(t->verdict)) + " " + s;
    return s;
  }
  return verdict_name(t->verdict);
}

// The listed changes (not the unchanged or still failing ones), as table rows.
std::vector<Row> rows_of(const RunComparison& c) {
  std::vector<Row> rows;
  for (const auto& ch : c.changes) {
    if (ch.kind == ChangeKind::unchanged || ch.kind == ChangeKind::still_failing) continue;
    const bool timing = ch.kind == ChangeKind::slower || ch.kind == ChangeKind::faster || ch.kind == ChangeKind::inconclusive ||
                        ch.kind == ChangeKind::timed_once || ch.kind == ChangeKind::new_test || ch.kind == ChangeKind::removed_test;
    std::string status = change_kind_name(ch.kind);
    if (ch.kind == ChangeKind::lost_coverage && ch.regression) status = "REGRESSION (SKIPPED)";
    if (ch.kind == ChangeKind::slower && !ch.confirmation.empty() && ch.confirmation.rfind("re-timed", 0) == 0)
      status = ch.regression ? "SLOWER (confirmed)" : "SLOWER (not confirmed)";
    // What --confirm found comes first: it decides.
    const std::string note = ch.confirmation.empty() ? ch.note : ch.confirmation + (ch.note.empty() ? "" : "; " + ch.note);
    rows.push_back({status, ch.key, cell(ch.base, timing), cell(ch.next, timing), ch.relative ? percent(*ch.relative) : "",
                    one_line(note, ch.confirmation.empty() ? 100 : 240)});
  }
  return rows;
}

std::string run_line(const RunRecord& r) {
  std::vector<std::string> parts;
  if (!r.started_at.empty()) parts.push_back("started " + r.started_at);
  if (!hostname(r).empty()) parts.push_back("host " + hostname(r));
  parts.push_back(fmt::format("{} tests", r.tests.size()));
  if (!commit(r).empty()) parts.push_back("commit " + commit(r).substr(0, 12));
  if (!r.complete) parts.push_back("INCOMPLETE");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string counts_line(const RunComparison& c) {
  std::vector<std::string> parts;
  for (auto k : {ChangeKind::correctness_regression, ChangeKind::slower, ChangeKind::lost_coverage, ChangeKind::inconclusive,
                 ChangeKind::timed_once, ChangeKind::faster, ChangeKind::fixed, ChangeKind::new_test, ChangeKind::removed_test,
                 ChangeKind::still_failing, ChangeKind::unchanged}) {
    if (const int n = c.count(k); n > 0) {
      std::string name = change_kind_name(k);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (k == ChangeKind::correctness_regression) name = "correctness regression";
      parts.push_back(fmt::format("{} {}", n, name));
    }
  }
  return parts.empty() ? "no tests" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string rule_line(const CompareOptions& o) {
  return fmt::format("a slowdown is a regression when NEW's median is more than {:g}% above BASE's, beyond both runs' noise, "
                     "and the interquartile ranges do not overlap{}",
                     o.threshold_pct, o.skip_is_regression ? "; PASS -> SKIPPED is a regression" : "");
}

std::string verdict_line(const RunComparison& c) {
  const int n = c.regressions();
  if (n == 0) return "OK: no regression";
  const int perf = static_cast<int>(std::count_if(c.changes.begin(), c.changes.end(),
                                                  [](const Change& ch) { return ch.kind == ChangeKind::slower && ch.regression; }));
  const int skipped = c.options.skip_is_regression ? c.count(ChangeKind::lost_coverage) : 0;
  return fmt::format("REGRESSION: {} regression{} ({} correctness, {} performance{})", n, n == 1 ? "" : "s",
                     c.count(ChangeKind::correctness_regression), perf, skipped ? fmt::format(", {} SKIPPED", skipped) : "");
}

// Text and names in compare's Markdown, one line of at most 200 bytes each.
std::string md_escape(const std::string& s) { return markdown_backslashed(one_line(s, 200)); }
std::string md_code(const std::string& s) { return markdown_code_span(one_line(s, 200)); }

}  // namespace

std::string comparison_text(const RunComparison& c, const RunRecord& base, const RunRecord& next, const CompareText& t) {
  std::string out;
  out += fmt::format("BASE  {}  ({})\n", t.base_label, run_line(base));
  out += fmt::format("NEW   {}  ({})\n", t.next_label, run_line(next));
  for (const auto& n : c.notes) out += fmt::format("note: {}\n", n);
  out += fmt::format("rule: {}\n\n", rule_line(c.options));

  const auto rows = rows_of(c);
  const std::size_t shown = t.max_rows ? std::min(t.max_rows, rows.size()) : rows.size();
  if (rows.empty()) {
    out += "no test changed\n";
  } else {
    std::array<std::size_t, 5> w{6, 4, 4, 3, 6};
    const std::array<const char*, 6> head{"status", "test", "BASE", "NEW", "change", "note"};
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& r = rows[i];
      w[0] = std::max(w[0], r.status.size());
      w[1] = std::max(w[1], r.test.size());
      w[2] = std::max(w[2], r.base.size());
      w[3] = std::max(w[3], r.next.size());
      w[4] = std::max(w[4], r.change.size());
    }
    auto line = [&](const std::string& a, const std::string& b, const std::string& c2, const std::string& d, const std::string& e,
                    const std::string& f) {
      std::string l = fmt::format("{:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {}", a, w[0], b, w[1], c2, w[2], d, w[3], e, w[4], f);
      while (!l.empty() && l.back() == ' ') l.pop_back();
      return l + "\n";
    };
    out += line(head[0], head[1], head[2], head[3], head[4], head[5]);
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& r = rows[i];
      out += line(r.status, r.test, r.base, r.next, r.change, r.note);
    }
    if (shown < rows.size()) out += fmt::format("... and {} more (--max-rows)\n", rows.size() - shown);
  }

  if (!c.impls.empty()) {
    out += "\nspeedup of NEW over BASE (geomean of BASE median / NEW median, tests both passed and timed):\n";
    std::size_t wi = 0;
    for (const auto& s : c.impls) wi = std::max(wi, s.impl.size());
    for (const auto& s : c.impls) out += fmt::format("  {:<{}}  {:.3f}x  ({} test{})\n", s.impl, wi, s.speedup, s.cases, s.cases == 1 ? "" : "s");
    if (c.overall) out += fmt::format("  {:<{}}  {:.3f}x  ({} tests)\n", "overall", wi, c.overall->speedup, c.overall->cases);
  }
  out += fmt::format("\n{}\n{}\n", counts_line(c), verdict_line(c));
  return out;
}

std::string comparison_markdown(const RunComparison& c, const RunRecord& base, const RunRecord& next, const CompareText& t) {
  std::string out = fmt::format("## backendbench compare: {}\n\n", verdict_line(c));
  out += "| | results | run |\n| --- | --- | --- |\n";
  out += fmt::format("| BASE | {} | {} |\n", md_code(t.base_label), md_escape(run_line(base)));
  out += fmt::format("| NEW | {} | {} |\n\n", md_code(t.next_label), md_escape(run_line(next)));
  for (const auto& n : c.notes) out += fmt::format("> {}\n", md_escape(n));
  if (!c.notes.empty()) out += "\n";
  out += fmt::format("{}.\n\n", md_escape(counts_line(c)));
  out += fmt::format("_Rule: {}._\n\n", md_escape(rule_line(c.options)));

  const auto rows = rows_of(c);
  const std::size_t shown = t.max_rows ? std::min(t.max_rows, rows.size()) : rows.size();
  if (rows.empty()) {
    out += "No test changed.\n";
  } else {
    out += "| status | test | BASE | NEW | change | note |\n| --- | --- | ---: | ---: | ---: | --- |\n";
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& r = rows[i];
      const bool bad = r.status.rfind("REGRESSION", 0) == 0 || r.status == "SLOWER" || r.status == "SLOWER (confirmed)";
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", bad ? "**" + r.status + "**" : r.status, md_code(r.test), md_escape(r.base),
                         md_escape(r.next), md_escape(r.change), md_escape(r.note));
    }
    if (shown < rows.size()) out += fmt::format("\n… and {} more rows (`--max-rows`).\n", rows.size() - shown);
  }
  if (!c.impls.empty()) {
    out += "\n### Speedup of NEW over BASE\n\nGeomean of BASE median / NEW median over the tests both runs passed and timed.\n\n";
    out += "| op | implementation | tests | speedup |\n| --- | --- | ---: | ---: |\n";
    for (const auto& s : c.impls) out += fmt::format("| {} | {} | {} | {:.3f}x |\n", md_code(s.op), md_code(s.impl), s.cases, s.speedup);
    if (c.overall) out += fmt::format("| **overall** | | {} | {:.3f}x |\n", c.overall->cases, c.overall->speedup);
  }
  return out;
}

}  // namespace bb
