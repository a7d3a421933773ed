#include "devices/device_runtimes.hpp"
#include "report/case_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/report_text.hpp"

namespace bb {

namespace {

std::string figure(const std::optional<double>& x, const char* format) { return finite(x) ? fmt::format(fmt::runtime(format), *x) : "-"; }

// A plain number for the CSV: empty for none, never "nan" or "inf".
std::string plain(const std::optional<double>& x) { return finite(x) ? fmt::format("{:.10g}", *x) : ""; }
std::string plain(double x) { return std::isfinite(x) ? fmt::format("{:.10g}", x) : ""; }

bool timed_pass(const TestResult& t) { return t.outcome.verdict == Verdict::pass && t.performance.timing.has_value(); }

// Columns of the console table, each with its width and alignment.
struct Column {
  const char* title;
  std::string CaseCells::*cell;
  bool right = true;
};
constexpr Column kColumns[] = {
    {"verdict", &CaseCells::verdict, false}, {"median", &CaseCells::median},   {"GB/s", &CaseCells::gbps},
    {"TFLOP/s", &CaseCells::tflops},          {"% peak", &CaseCells::peak},      {"speedup", &CaseCells::speedup},
    {"interval", &CaseCells::interval, false}, {"max abs err", &CaseCells::max_abs}, {"max rel err", &CaseCells::max_rel},
    {"tol used", &CaseCells::tolerance_used},
};

// Widths count characters, not bytes ("±" and "…" are two and three bytes).
std::size_t chars(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string padded(const std::string& s, std::size_t width, bool right) {
  const std::size_t n = chars(s);
  const std::string pad(width > n ? width - n : 0, ' ');
  return right ? pad + s : s + pad;
}

}  // namespace

std::vector<CaseGroup> case_groups(const RunRecord& run) {
  std::vector<CaseGroup> groups;
  std::map<std::tuple<std::string, std::string, std::string, int>, std::size_t> index;
  for (const auto& t : run.tests) {
    if (t.outcome.verdict == Verdict::skipped) continue;
    const auto key = std::tuple{t.id.op, t.id.case_id, device_label(t), t.id.repeat};
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) groups.push_back(CaseGroup{t.id.op, t.id.case_id, t.id.shapes, device_label(t), t.id.repeat, {}});
    groups[it->second].tests.push_back(&t);
  }
  // Ops in the run's order (an op the run does not list last), cases in the order they first ran.
  std::map<std::string, std::size_t> op_rank;
  for (const auto& op : run.ops) op_rank.try_emplace(op.op, op_rank.size());
  auto rank = [&](const std::string& op) { auto it = op_rank.find(op); return it == op_rank.end() ? op_rank.size() : it->second; };
  std::stable_sort(groups.begin(), groups.end(), [&](const CaseGroup& a, const CaseGroup& b) { return rank(a.op) < rank(b.op); });
  for (auto& g : groups)
    std::stable_sort(g.tests.begin(), g.tests.end(), [](const TestResult* a, const TestResult* b) { return a->id.impl < b->id.impl; });
  return groups;
}

CaseCells case_cells(const TestResult& t) {
  CaseCells c;
  c.verdict = verdict_name(t.outcome.verdict);
  c.median = c.gbps = c.tflops = c.peak = c.speedup = c.interval = c.max_abs = c.max_rel = c.tolerance_used = "-";
  // Figures of speed only for a test that passed (an incorrect implementation has no time).
  if (timed_pass(t)) {
    const auto& p = t.performance;
    c.median = format_seconds(p.timing->stats.median);
    c.gbps = figure(p.gbps, "{:.1f}");
    c.tflops = figure(p.tflops, "{:.3g}");
    c.peak = figure(p.peak_pct, "{:.1f}%");
    c.speedup = format_speedup(p.speedup);
    if (finite(p.speedup_low) && finite(p.speedup_high)) c.interval = fmt::format("[{:.2f}, {:.2f}]", *p.speedup_low, *p.speedup_high);
  }
  if (const auto& e = t.outcome.errors) {
    c.max_abs = fmt::format("{:.2e}", e->max_abs_error);
    c.max_rel = fmt::format("{:.2e}", e->max_rel_error);
    c.tolerance_used = std::isfinite(e->tolerance_used) ? fmt::format("{:.1f}%", e->tolerance_used * 100) : "over";
  }
  return c;
}

std::string case_table_text(const RunRecord& run) {
  const auto groups = case_groups(run);
  if (groups.empty()) return "";
  // One width per column over the whole run, so every op's rows line up alike.
  std::size_t name_w = std::string_view("implementation").size();
  std::vector<std::size_t> widths;
  for (const auto& col : kColumns) widths.push_back(std::string_view(col.title).size());
  std::vector<std::vector<CaseCells>> cells(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const auto* t : groups[g].tests) {
      name_w = std::max(name_w, chars(clean_text(t->id.impl)) + 2);
      cells[g].push_back(case_cells(*t));
      for (std::size_t k = 0; k < std::size(kColumns); ++k) widths[k] = std::max(widths[k], chars(cells[g].back().*kColumns[k].cell));
    }
  std::string out;
  auto header = [&] {
    std::string line = "  " + padded("implementation", name_w, false);
    for (std::size_t k = 0; k < std::size(kColumns); ++k) line += "  " + padded(kColumns[k].title, widths[k], kColumns[k].right);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string op;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& group = groups[g];
    if (group.op != op) {
      op = group.op;
      std::size_t cases = 0;
      for (const auto& x : groups) cases += x.op == op ? 1 : 0;
      out += fmt::format("\n{} per case: {}\n", clean_text(op), plural(cases, "case"));
      out += header();
    }
    out += fmt::format("  {}{}{}{}\n", clean_text(group.case_id), group.repeat > 0 ? fmt::format(" #{}", group.repeat) : "",
                       group.shapes.empty() ? "" : "  " + clean_text(group.shapes), is_cpu(group.device) ? "" : "  on " + group.device);
    for (std::size_t i = 0; i < group.tests.size(); ++i) {
      std::string line = "    " + padded(clean_text(group.tests[i]->id.impl), name_w - 2, false);
      for (std::size_t k = 0; k < std::size(kColumns); ++k) line += "  " + padded(cells[g][i].*kColumns[k].cell, widths[k], kColumns[k].right);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  out += "\nmedian: per call; GB/s, TFLOP/s: the case's bytes and FLOPs over the median; % peak: of the device's measured bandwidth; "
         "speedup: the baseline's time over this one's, paired, with its 99% interval; max abs/rel err: against the reference, "
         "finite elements; tol used: the largest |a - e| / (atol + rtol |e|) (100%: at the edge of the tolerance).\n";
  return out;
}

std::string tests_csv(const RunRecord& run) {
  static const char* kHeader[] = {"op",          "implementation", "case",          "variant",        "kind",           "mode",           "device",
                                  "repeat",      "shapes",         "verdict",       "median_s",       "baseline_median_s", "speedup",
                                  "speedup_low", "speedup_high",   "gbps",          "tflops",         "peak_bandwidth_pct", "roofline_pct",
                                  "bytes",       "flops",          "samples",       "max_abs_error",  "max_rel_error",  "tolerance_used",
                                  "error_output", "zeros_would_pass", "duration_s", "message"};
  std::string out;
  auto row = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_field(cells[i]);
    out += "\r\n";
  };
  row(std::vector<std::string>(std::begin(kHeader), std::end(kHeader)));
  for (const auto& t : run.tests) {
    const bool timed = timed_pass(t);
    const auto& p = t.performance;
    const auto& e = t.outcome.errors;
    auto speed = [&](const std::optional<double>& x) { return timed ? plain(x) : std::string(); };
    row({t.id.op,
         t.id.impl,
         t.id.case_id,
         t.id.variant,
         t.id.kind,
         t.id.mode,
         device_label(t),
         std::to_string(t.id.repeat),
         t.id.shapes,
         verdict_name(t.outcome.verdict),
         timed ? plain(p.timing->stats.median) : "",
         speed(p.baseline_median),
         speed(p.speedup),
         speed(p.speedup_low),
         speed(p.speedup_high),
         speed(p.gbps),
         speed(p.tflops),
         speed(p.peak_pct),
         speed(p.roofline_pct),
         plain(t.id.bytes),
         plain(t.id.flops),
         timed ? std::to_string(p.timing->stats.samples) : "",
         e ? plain(e->max_abs_error) : "",
         e ? plain(e->max_rel_error) : "",
         e ? (std::isfinite(e->tolerance_used) ? plain(e->tolerance_used) : std::string("inf")) : "",
         e ? e->output : "",
         t.outcome.zeros_pass ? "1" : "0",
         plain(t.phases.duration),
         first_line(message_headline(t.outcome.message), 500)});
  }
  return out;
}

}  // namespace bb
