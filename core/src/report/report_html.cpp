// report.html: the run as one self-contained page (inline CSS, inline JS, inline SVG; nothing
// fetched, so it opens from a CI artifact or an air-gapped machine). In order:
//
//   header        the verdict, the counts per verdict, the scores (correctness, geomean speedup,
//                 perf@p), host and timing of the run
//   failures      first: every test that did not pass (capped), its message and mismatch figures
//   speedup       per implementation, an SVG bar chart on a log scale around a 1.0x line; a
//                 failed implementation is drawn as "failed", never as a bar
//   bandwidth     percent of the device's peak bandwidth per timed case (SVG bars)
//   timing        per timed case: median, IQR box and min-max whiskers, the baseline marked (SVG)
//   implementations, skipped (grouped by reason), all tests (with a filter), provenance
//
// Every string from the run is escaped (plugin messages are hostile); the script reads only
// the page's own DOM. Long lists are capped so that a run of 100k tests stays a page a browser
// opens: the capped counts are said where they are cut.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"
#include "report/case_table.hpp"
#include "report/escape.hpp"
#include "report/report_files.hpp"
#include "report/report_text.hpp"

namespace bb {

namespace {

constexpr std::size_t kMaxFailures = 500;
constexpr std::size_t kMaxTestRows = 2000;
constexpr std::size_t kMaxAlike = 50;  // cases listed under a group of like failures
constexpr std::size_t kMaxChartRows = 100;
constexpr std::size_t kMaxMessage = 4096;

// Text from the run in HTML (text or an attribute value), at most `max_bytes` of it.
std::string h(std::string_view raw, std::size_t max_bytes = kMaxMessage) { return html_escape(raw, max_bytes); }

// At most `n` characters (code points) of `s`, with an ellipsis: chart labels have no wrapping.
std::string shorten(const std::string& raw, std::size_t n) {
  const std::string s = clean_text(raw);
  std::size_t chars = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (chars == n) return s.substr(0, i) + "…";
      ++chars;
    }
  }
  return s;
}


// A verdict's badge class (the style's colours), by its kind.
const char* verdict_class(Verdict v) {
  switch (verdict_kind(v)) {
    case VerdictKind::passed: return "pass";
    case VerdictKind::skipped: return "skip";
    case VerdictKind::error: return "err";
    case VerdictKind::failed: break;
  }
  return "fail";
}

std::string badge(Verdict v) { return fmt::format("<span class=\"badge {}\">{}</span>", verdict_class(v), verdict_name(v)); }

constexpr const char* kStyle = R"css(
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--err:#8250df;--skip:#6e7781;--warn:#bc4c00}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1200px;margin:0 auto;padding:0 24px 48px}
header{padding:20px 24px;border-bottom:1px solid var(--line);background:var(--bg)}
header .inner{max-width:1200px;margin:0 auto}
header.bad{border-top:6px solid var(--fail)} header.good{border-top:6px solid var(--pass)} header.none{border-top:6px solid var(--skip)}
h1{margin:0 0 6px;font-size:24px} h1 .verdict{font-weight:600} header.bad h1 .verdict{color:var(--fail)} header.good h1 .verdict{color:var(--pass)}
h2{margin:32px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line);font-size:19px}
h2 .count{color:var(--muted);font-weight:400;font-size:15px}
.meta{color:var(--muted);font-size:13px;word-break:break-all}
.chips{margin:12px 0 4px;display:flex;flex-wrap:wrap;gap:6px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:12px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:140px}
.card .v{font-size:20px;font-weight:600} .card .k{color:var(--muted);font-size:12px}
nav{margin:14px 0 0;font-size:13px} nav a{margin-right:14px;color:#0969da;text-decoration:none}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.badge.pass{background:var(--pass)} .badge.fail{background:var(--fail)} .badge.err{background:var(--err)} .badge.skip{background:var(--skip)}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--bg);font-weight:600;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:break-word;max-width:300px}
.msg{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:12em;overflow:auto}
.mm{color:var(--muted);font-size:12px;margin-top:2px}.mm b{color:var(--fg);font-weight:600}
pre{margin:4px 0 0;padding:8px;background:var(--bg);border:1px solid var(--line);border-radius:6px;white-space:pre-wrap;word-break:break-word;font-size:12px;max-height:260px;overflow:auto}
.failure td{background:#fff8f8} table.by-impl{width:auto;margin-bottom:12px} table.by-impl td{padding-right:24px}
.note{color:var(--muted);font-size:13px;margin:6px 0}
.empty{color:var(--muted);font-style:italic}
svg{display:block;max-width:100%;height:auto;font-family:system-ui,sans-serif}
svg text{font-size:12px;fill:var(--fg)} svg .lbl{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11.5px}
svg .axis{stroke:#8c959f;stroke-width:1} svg .grid{stroke:#eaeef2;stroke-width:1} svg .one{stroke:#57606a;stroke-width:1.5;stroke-dasharray:4 3}
svg .faster{fill:#2da44e} svg .slower{fill:#fb8f44} svg .bw{fill:#218bff} svg .failed{fill:var(--fail);font-weight:600} svg .muted{fill:var(--muted)}
svg .box{fill:#b6e3ff;stroke:#0969da} svg .box.untrusted{fill:#fff1e5;stroke:var(--warn);stroke-dasharray:3 2} svg text.untrusted,.untrusted{fill:var(--warn);color:var(--warn)} svg .whisker{stroke:#0969da;stroke-width:1.2} svg .median{stroke:#0a3069;stroke-width:2.5} svg .base{fill:var(--warn)}
.legend{font-size:12px;color:var(--muted);margin:4px 0 8px}
table.cases tr.op th{background:var(--bg);text-align:left;font-size:15px} table.cases tr.case td{padding-top:10px;font-weight:600;border-bottom:none} table.cases .muted{color:var(--muted);font-weight:400;margin-left:8px}
.alike{font-size:12px;color:var(--muted);margin-top:4px} .alike ul{margin:4px 0;padding-left:18px}
.legend span{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 12px;vertical-align:middle}
.filter{margin:8px 0;display:flex;gap:8px;align-items:center}
.filter input{padding:5px 8px;border:1px solid var(--line);border-radius:6px;width:320px;font:inherit}
.filter select{padding:4px;border:1px solid var(--line);border-radius:6px;font:inherit}
details summary{cursor:pointer;color:#0969da}
ul.skips li{margin:4px 0}
)css";

constexpr const char* kScript = R"js(
(function(){
  var input=document.getElementById('test-filter'), sel=document.getElementById('verdict-filter');
  if(!input||!sel) return;
  var rows=document.querySelectorAll('#all-tests tbody tr'), shown=document.getElementById('shown');
  function apply(){
    var q=input.value.toLowerCase(), v=sel.value, n=0;
    for(var i=0;i<rows.length;i++){
      var r=rows[i], ok=(!v||r.getAttribute('data-verdict')===v)&&(!q||r.textContent.toLowerCase().indexOf(q)>=0);
      r.style.display=ok?'':'none'; if(ok) n++;
    }
    if(shown) shown.textContent=n+' shown';
  }
  input.addEventListener('input',apply); sel.addEventListener('change',apply); apply();
})();
)js";

// A horizontal chart's frame: labels on the left, the plot, a value column on the right. The
// label column is as wide as its longest label (fit_labels), so no label is cut: the page
// scales the whole chart down instead (svg max-width 100%).
struct Frame {
  double label_w = 330, plot_w = 500, value_w = 230, row_h = 24, top = 28, bottom = 10;
  // Monospace 11.5 px: about 7 px a character, and room for the gap to the plot.
  void fit_labels(const std::vector<std::string>& labels) {
    std::size_t longest = 0;
    for (const auto& l : labels) {
      std::size_t chars = 0;
      for (unsigned char c : clean_text(l)) chars += (c & 0xC0) != 0x80;
      longest = std::max(longest, chars);
    }
    label_w = std::max(160.0, 16.0 + 7.0 * static_cast<double>(longest));
  }
  double width() const { return label_w + plot_w + value_w; }
  double height(std::size_t rows) const { return top + row_h * static_cast<double>(rows) + bottom; }
  double y(std::size_t row) const { return top + row_h * static_cast<double>(row); }
};

// A log axis over [lo, hi], its ticks at 1, 2, 5 per decade.
struct LogAxis {
  double lo, hi;
  double x(const Frame& f, double v) const {
    v = std::clamp(v, lo, hi);
    return f.label_w + (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) * f.plot_w;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    for (int e = static_cast<int>(std::floor(std::log10(lo))) - 1; e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
    return t;
  }
};

std::string svg_open(const Frame& f, std::size_t rows, const char* id, const std::string& label) {
  return fmt::format("<svg id=\"{}\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                     id, h(label), f.width(), f.height(rows), f.width());
}

// The row's label at the left, whole (the frame fits it), with the text as its tooltip too.
std::string row_label(const Frame& f, std::size_t row, const std::string& text) {
  return fmt::format("<text class=\"lbl\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\"><title>{}</title>{}</text>\n", f.label_w - 8,
                     f.y(row) + f.row_h * 0.65, h(text), h(text));
}

std::string fmt_ratio(double v) { return v >= 100 ? fmt::format("{:.0f}x", v) : v >= 10 ? fmt::format("{:.1f}x", v) : fmt::format("{:.2f}x", v); }

// A tick's label: "5 us", "20 ms".
std::string tick_seconds(double t) {
  if (t < 1e-6) return fmt::format("{:g} ns", t * 1e9);
  if (t < 1e-3) return fmt::format("{:g} us", t * 1e6);
  if (t < 1.0) return fmt::format("{:g} ms", t * 1e3);
  return fmt::format("{:g} s", t);
}

std::string log_grid(const Frame& f, const LogAxis& ax, std::size_t rows, bool seconds) {
  std::string out;
  for (double t : ax.ticks()) {
    const double x = ax.x(f, t);
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>", x, f.top - 4, f.y(rows));
    out += fmt::format("<text class=\"muted\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x, f.top - 10,
                       h(seconds ? tick_seconds(t) : fmt::format("{:g}x", t)));
  }
  return out;
}

// Speedup per implementation: bars from the 1.0x line, right for faster, left for slower.
std::string speedup_chart(const RunRecord& run) {
  const auto& impls = run.scores.impls;
  const std::size_t rows = std::min(impls.size(), kMaxChartRows);
  if (rows == 0) return "<p class=\"empty\">No implementations.</p>\n";
  double lo = 0.5, hi = 2.0;
  for (const auto& is : impls)
    if (is.fully_correct && finite(is.speedup) && *is.speedup > 0) lo = std::min(lo, *is.speedup / 1.3), hi = std::max(hi, *is.speedup * 1.3);
  const LogAxis ax{lo, hi};
  Frame f;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < rows; ++i) labels.push_back(impls[i].impl);
  f.fit_labels(labels);
  const auto verdicts = verdict_counts_by_impl(run);
  std::string out = "<div class=\"legend\"><span style=\"background:#2da44e\"></span>faster than the baseline<span style=\"background:#fb8f44\"></span>slower"
                    "<span style=\"background:#cf222e\"></span>failed: not timed as if right, no bar</div>\n";
  out += svg_open(f, rows, "speedup-chart", "speedup per implementation, log scale");
  out += log_grid(f, ax, rows, false);
  const double x1 = ax.x(f, 1.0);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto& is = impls[i];
    const double y = f.y(i) + 4, bh = f.row_h - 8;
    out += "<g class=\"row\">";
    out += row_label(f, i, is.impl);
    const std::string status = impl_status(is);
    if (is.fully_correct && finite(is.speedup) && *is.speedup > 0) {
      const double v = *is.speedup, xv = ax.x(f, v);
      out += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"2\"><title>{}: {}</title></rect>",
                         v >= 1 ? "faster" : "slower", std::min(x1, xv), y, std::max(1.0, std::abs(xv - x1)), bh, h(is.impl), fmt_ratio(v));
      std::string label = fmt_ratio(v);
      if (is.speedup_low && is.speedup_high)  // the 99% interval of paired timing; n.s.: it holds 1.0
        label += fmt::format(" [{:.2f}, {:.2f}]{}", *is.speedup_low, *is.speedup_high, is.significant() ? "" : " n.s.");
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", f.label_w + f.plot_w + 8, f.y(i) + f.row_h * 0.65, h(label));
    } else {
      std::string what, cls = "muted";
      if (status == "failed") {
        auto it = verdicts.find(is.impl);
        what = "✗ failed" + (it == verdicts.end() ? std::string() : " (" + it->second + ")");
        cls = "failed";
      } else if (status == "correct") what = "correct, not timed";
      else what = status;
      out += fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", cls, f.label_w + 8, f.y(i) + f.row_h * 0.65, h(shorten(what, 70)));
    }
    out += "</g>\n";
  }
  out += fmt::format("<line class=\"one\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>\n", x1, f.top - 4, f.y(rows));
  out += "</svg>\n";
  if (impls.size() > rows) out += fmt::format("<p class=\"note\">The first {} of {} implementations are drawn.</p>\n", rows, impls.size());
  return out;
}

// Why a measurement's spread is not to be trusted, or "": it stopped on its budget before the
// noise target, has few samples, or varied more than 10%.
std::string untrusted_spread(const Timing& t) {
  std::vector<std::string> why;
  if (t.stop == "timeout") why.push_back("stopped on its time budget before the noise target");
  if (t.stats.samples < 10) why.push_back(fmt::format("{} samples", t.stats.samples));
  if (std::isfinite(t.stats.rel_stdev) && t.stats.rel_stdev > 0.10) why.push_back(fmt::format("±{:.0f}% spread", t.stats.rel_stdev * 100));
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

std::string case_name(const TestResult& t) {
  return fmt::format("{} {}{}{}", t.id.impl, t.id.case_id, t.id.repeat > 0 ? fmt::format("#{}", t.id.repeat) : "",
                     is_cpu(t.id.device) || t.id.device.empty() ? "" : " " + device_label(t));
}

// Percent of peak bandwidth per timed case, on a linear 0-100% axis.
std::string bandwidth_chart(const RunRecord& run) {
  std::vector<const TestResult*> rows;
  std::size_t total = 0;
  for (const auto& t : run.tests)
    if (finite(t.performance.peak_pct) && t.outcome.verdict == Verdict::pass && ++total <= kMaxChartRows) rows.push_back(&t);
  if (rows.empty())
    return "<p class=\"empty\">No test reported a percent of peak bandwidth (it needs a timed case on a device and the bytes the case moves).</p>\n";
  double top = 100;
  for (const auto* t : rows) top = std::max(top, *t->performance.peak_pct);
  Frame f;
  std::vector<std::string> labels;
  for (const auto* t : rows) labels.push_back(case_name(*t));
  f.fit_labels(labels);
  std::string out = svg_open(f, rows.size(), "bandwidth-chart", "percent of peak bandwidth per case");
  for (double p = 0; p <= top + 1e-9; p += top > 150 ? 50 : 25) {
    const double x = f.label_w + p / top * f.plot_w;
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/><text class=\"muted\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:.0f}%</text>\n",
                       x, f.top - 4, f.y(rows.size()), f.top - 10, p);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& t = *rows[i];
    const double w = std::max(1.0, *t.performance.peak_pct / top * f.plot_w);
    out += "<g class=\"row\">" + row_label(f, i, case_name(t));
    out += fmt::format("<rect class=\"bw\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"2\"><title>{:.1f}% of peak{}</title></rect>",
                       f.label_w, f.y(i) + 4, w, f.row_h - 8, *t.performance.peak_pct, finite(t.performance.gbps) ? fmt::format(", {:.1f} GB/s", *t.performance.gbps) : "");
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{:.1f}%{}</text></g>\n", f.label_w + f.plot_w + 8, f.y(i) + f.row_h * 0.65, *t.performance.peak_pct,
                       finite(t.performance.gbps) ? fmt::format(" · {:.0f} GB/s", *t.performance.gbps) : "");
  }
  out += "</svg>\n";
  if (total > rows.size()) out += fmt::format("<p class=\"note\">The first {} of {} cases are drawn.</p>\n", rows.size(), total);
  return out;
}

// Timing spread per timed case: min-max whiskers, the IQR box, the median; the baseline's
// median as a diamond.
std::string timing_chart(const RunRecord& run) {
  std::vector<const TestResult*> rows;
  std::size_t total = 0;
  for (const auto& t : run.tests)
    if (t.performance.timing && t.performance.timing->stats.median > 0 && std::isfinite(t.performance.timing->stats.median) && ++total <= kMaxChartRows) rows.push_back(&t);
  if (rows.empty()) return "<p class=\"empty\">No timed tests (a correctness-only run, or no implementation passed).</p>\n";
  double lo = INFINITY, hi = 0;
  for (const auto* t : rows) {
    const auto& s = t->performance.timing->stats;
    for (double v : {s.min, s.median, s.max, t->performance.baseline_median.value_or(0.0)})
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  lo /= 1.5, hi *= 1.5;
  const LogAxis ax{lo, hi};
  Frame f;
  std::vector<std::string> labels;
  for (const auto* t : rows) labels.push_back(case_name(*t));
  f.fit_labels(labels);
  std::string out =
      "<div class=\"legend\">box: interquartile range · thick line: median · whiskers: min to max · <span class=\"diamond\" "
      "style=\"background:#bc4c00;transform:rotate(45deg);width:8px;height:8px\"></span>baseline median</div>\n";
  out += svg_open(f, rows.size(), "timing-chart", "timing spread per case, log scale");
  out += log_grid(f, ax, rows.size(), true);
  std::size_t untrusted = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& t = *rows[i];
    const auto& s = t.performance.timing->stats;
    const double cy = f.y(i) + f.row_h / 2, bh = f.row_h - 10;
    const double xmin = ax.x(f, s.min > 0 ? s.min : s.median), xmax = ax.x(f, s.max > 0 ? s.max : s.median);
    const double xq1 = ax.x(f, s.q1 > 0 ? s.q1 : s.median), xq3 = ax.x(f, s.q3 > 0 ? s.q3 : s.median), xm = ax.x(f, s.median);
    out += "<g class=\"row\">" + row_label(f, i, case_name(t));
    out += fmt::format("<title>{}</title>", h(timing_line(*t.performance.timing)));
    out += fmt::format("<line class=\"whisker\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", xmin, xmax, cy, cy);
    out += fmt::format("<line class=\"whisker\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/><line class=\"whisker\" x1=\"{3:.1f}\" x2=\"{3:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>",
                       xmin, cy - bh / 3, cy + bh / 3, xmax);
    out += fmt::format("<rect class=\"box{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>", untrusted_spread(*t.performance.timing).empty() ? "" : " untrusted", xq1, cy - bh / 2, std::max(1.5, xq3 - xq1), bh);
    out += fmt::format("<line class=\"median\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>", xm, cy - bh / 2, cy + bh / 2);
    if (finite(t.performance.baseline_median) && *t.performance.baseline_median > 0) {
      const double xb = ax.x(f, *t.performance.baseline_median);
      out += fmt::format("<path class=\"base\" d=\"M{:.1f} {:.1f} l4 4 l-4 4 l-4 -4 z\"><title>baseline median {}</title></path>", xb, cy - 4,
                         h(format_seconds(*t.performance.baseline_median)));
    }
    const std::string doubt = untrusted_spread(*t.performance.timing);
    out += fmt::format("<text{} x=\"{:.1f}\" y=\"{:.1f}\">{}{} ±{:.1f}%{}</text></g>\n", doubt.empty() ? "" : " class=\"untrusted\"",
                       f.label_w + f.plot_w + 8, f.y(i) + f.row_h * 0.65, doubt.empty() ? "" : "⚠ ", h(format_seconds(s.median)),
                       std::isfinite(s.rel_stdev) ? s.rel_stdev * 100 : 0.0,
                       doubt.empty() ? "" : fmt::format("<title>not to be trusted: {}</title>", h(doubt)));
    if (!doubt.empty()) ++untrusted;
  }
  out += "</svg>\n";
  out += "<p class=\"note\">Each row: the box spans the middle half of the samples (first to third quartile), the line in it is the "
         "median, the whiskers reach the fastest and slowest sample, ◆ is the baseline's median; ± is the samples' relative standard "
         "deviation (their spread, in percent of the mean).</p>\n";
  if (total > rows.size()) out += fmt::format("<p class=\"note\">The first {} of {} timed cases are drawn.</p>\n", rows.size(), total);
  if (untrusted > 0)
    out += fmt::format("<p class=\"note\"><span class=\"untrusted\">⚠</span> {} of these spreads are not to be trusted (dashed box): the "
                       "measurement stopped on its budget before the noise target, took few samples, or varied more than 10%; its "
                       "tooltip says which. Rerun those cases with a larger --timeout, or on a quieter machine.</p>\n",
                       untrusted);
  return out;
}

// What the implementation printed during the test, folded under its message.
std::string printed(const TestResult& t) {
  if (t.output.text.empty()) return "";
  return fmt::format("<details class=\"printed\"><summary>it printed {} bytes</summary><pre>{}</pre></details>",
                     t.output.bytes ? t.output.bytes : t.output.text.size(), h(t.output.text));
}

// Where a CRASH happened and the line that runs it again, folded under its message.
std::string crash_details(const TestResult& t) {
  const auto lines = crash_lines(t.outcome.crash, 16);
  if (lines.empty()) return "";
  std::string text;
  for (const auto& l : lines) text += (text.empty() ? "" : "\n") + l;
  return fmt::format("<details class=\"crash\" open><summary>where it crashed</summary><pre>{}</pre></details>", h(text));
}

// A mismatch's figures in one line, under the message.
std::string mismatch_line(const TestResult& t) {
  if (!t.outcome.mismatch) return "";
  const auto& m = *t.outcome.mismatch;
  std::string out = fmt::format("output <b>{}</b>: <b>{}</b> of {} elements", h(m.output), m.count, m.total);
  if (m.unwritten > 0) out += fmt::format(" ({} unwritten)", m.unwritten);
  if (m.max_abs_error != 0 || m.max_rel_error != 0)  // unwritten elements alone have no error to tell
    out += fmt::format(" · max abs error <b>{:.4g}</b> · max rel error <b>{:.4g}</b>", m.max_abs_error, m.max_rel_error);
  if (!m.first_index.empty()) out += fmt::format(" · first at {}: actual {:.7g}, expected {:.7g}", h(m.first_index), m.actual, m.expected);
  out += fmt::format(" · atol {:.3g}, rtol {:.3g}", m.atol, m.rtol);
  return "<div class=\"mm\">" + out + "</div>";
}

// The per-case table (case_table.hpp): a row naming each case, its shapes and device, then a row
// per implementation.
std::string case_table_html(const RunRecord& run) {
  const auto groups = case_groups(run);
  if (groups.empty()) return "<p class=\"empty\">No tests ran.</p>\n";
  std::string out =
      "<table class=\"cases\"><thead><tr><th>implementation</th><th>verdict</th><th class=\"num\">median</th><th class=\"num\">GB/s</th>"
      "<th class=\"num\">TFLOP/s</th><th class=\"num\">% peak</th><th class=\"num\">speedup</th><th class=\"num\">interval</th>"
      "<th class=\"num\">max abs err</th><th class=\"num\">max rel err</th><th class=\"num\">tol used</th></tr></thead><tbody>\n";
  std::size_t rows = 0, total = 0;
  for (const auto& g : groups) total += g.tests.size();
  std::string op;
  for (const auto& g : groups) {
    if (rows >= kMaxTestRows) break;
    if (g.op != op) out += fmt::format("<tr class=\"op\"><th colspan=\"11\">{}</th></tr>\n", h(op = g.op));
    out += fmt::format("<tr class=\"case\"><td colspan=\"11\"><span class=\"name\">{}{}</span>{}{}</td></tr>\n", h(g.case_id),
                       g.repeat > 0 ? fmt::format(" #{}", g.repeat) : "", g.shapes.empty() ? "" : " <span class=\"muted\">" + h(g.shapes) + "</span>",
                       is_cpu(g.device) ? "" : " <span class=\"muted\">on " + h(g.device) + "</span>");
    for (const auto* t : g.tests) {
      const CaseCells c = case_cells(*t);
      out += fmt::format("<tr><td class=\"name\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td></tr>\n",
                         h(t->id.impl), badge(t->outcome.verdict), h(c.median), h(c.gbps), h(c.tflops), h(c.peak), h(c.speedup), h(c.interval), h(c.max_abs),
                         h(c.max_rel), h(c.tolerance_used));
      ++rows;
    }
  }
  out += "</tbody></table>\n";
  if (rows < total) out += fmt::format("<p class=\"note\">The first {} of {} tests are listed (tests.csv has them all).</p>\n", rows, total);
  out += "<p class=\"note\">median: per call; GB/s, TFLOP/s: the case's bytes and FLOPs over the median (CPU cases too); % peak: of the device's "
         "measured bandwidth; speedup: the baseline's median over this one's, paired, with its 99% interval; max abs/rel err: against the "
         "reference over finite elements, on passing tests too; tol used: the largest |actual &minus; expected| / (atol + rtol &middot; |expected|) "
         "(100%: at the edge of the tolerance; over: an exact output differed).</p>\n";
  return out;
}

std::string timing_cell(const TestResult& t) {
  if (!t.performance.timing) return "";
  return h(format_seconds(t.performance.timing->stats.median));
}

}  // namespace

// Against a store of runs: the tests whose median is above or below every earlier run's, with
// each run's median, oldest first.
std::string trend_table(const ReportComparison& rc) {
  std::vector<const TestTrend*> rows;
  for (const auto& t : *rc.trends)
    if (t.new_high || t.new_low) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const TestTrend* a, const TestTrend* b) { return a->new_high && !b->new_high; });
  std::string out = fmt::format("<h3>Trend over the last {}</h3>\n", plural(rc.trend_runs.size(), "run"));
  if (rows.empty()) return out + "<p class=\"empty\">No test's median is above or below every earlier run's.</p>\n";
  out += "<table class=\"tests\"><thead><tr><th>trend</th><th>test</th><th class=\"num\">against their median</th>";
  for (const auto& r : rc.trend_runs) out += fmt::format("<th class=\"num\">{}</th>", h(r));
  out += "<th class=\"num\">now</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < rows.size() && i < kMaxFailures; ++i) {
    const TestTrend& t = *rows[i];
    out += fmt::format("<tr><td><span class=\"badge {}\">{}</span></td><td class=\"name\">{}</td><td class=\"num\">{}</td>", t.new_high ? "fail" : "pass",
                       t.new_high ? "new high" : "new low", h(t.key), t.vs_median ? fmt::format("{:+.1f}%", *t.vs_median * 100) : "");
    for (const auto& m : t.medians) out += fmt::format("<td class=\"num\">{}</td>", m ? h(format_seconds(*m)) : "-");
    out += "</tr>\n";
  }
  out += "</tbody></table>\n<p class=\"note\">new high (low): tonight's median above (below) every one of the runs compared with; "
         "a new high is a regression only where the table above says so.</p>\n";
  if (rows.size() > kMaxFailures) out += fmt::format("<p class=\"note\">…and {} more.</p>\n", rows.size() - kMaxFailures);
  return out;
}

// "Compared with BASE": what compare found, regressions listed.
std::string comparison_section(const ReportComparison& rc) {
  const RunComparison& c = *rc.comparison;
  std::string out = fmt::format("<section id=\"compared\">\n<h2>Compared with {} <span class=\"count\">{}</span></h2>\n", h(rc.base_label, 300),
                                c.regressions() == 0 ? "no regression" : plural(static_cast<std::size_t>(c.regressions()), "regression"));
  out += "<div class=\"chips\">";
  for (ChangeKind k : {ChangeKind::correctness_regression, ChangeKind::slower, ChangeKind::lost_coverage, ChangeKind::inconclusive,
                       ChangeKind::faster, ChangeKind::fixed, ChangeKind::new_test, ChangeKind::removed_test})
    if (const int n = c.count(k); n > 0) {
      // How many of them compare --confirm re-timed and confirmed (a regression that stands).
      int confirmed = 0;
      for (const auto& ch : c.changes) confirmed += ch.kind == k && ch.regression && !ch.confirmation.empty() && ch.confirmation.rfind("not re-timed", 0) != 0;
      out += fmt::format("<span class=\"badge {}\">{} {}{}</span>", k == ChangeKind::correctness_regression || k == ChangeKind::slower ? "fail"
                                                                     : k == ChangeKind::faster || k == ChangeKind::fixed         ? "pass"
                                                                                                                                 : "skip",
                         change_kind_name(k), n, confirmed > 0 ? fmt::format(" ({} confirmed)", confirmed) : "");
    }
  out += "</div>\n";
  for (const auto& n : c.notes) out += fmt::format("<p class=\"note\">{}</p>\n", h(n, 1000));
  std::size_t listed = 0;
  for (const auto& ch : c.changes) {
    if (!ch.regression) continue;
    if (listed == 0)
      out += "<table class=\"tests\"><thead><tr><th>change</th><th>implementation</th><th>case</th><th class=\"num\">before</th>"
             "<th class=\"num\">now</th><th class=\"num\">change</th><th>why</th></tr></thead><tbody>\n";
    if (++listed > kMaxFailures) continue;
    auto median = [](const std::optional<TestSummary>& t) {
      return t && t->timing ? format_seconds(t->timing->median) : t ? std::string(verdict_name(t->verdict)) : std::string("-");
    };
    out += fmt::format("<tr class=\"failure\"><td><span class=\"badge fail\">{}</span></td><td class=\"name\">{}</td><td class=\"name\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                       change_kind_name(ch.kind), h(ch.impl), h(ch.next ? ch.next->case_id : ch.base ? ch.base->case_id : ch.key),
                       h(median(ch.base)), h(median(ch.next)), ch.relative ? fmt::format("{:+.1f}%", *ch.relative * 100) : "",
                       h(ch.note, 1000) + (ch.confirmation.empty() ? "" : "<div class=\"confirm\">" + h(ch.confirmation, 1000) + "</div>"));
  }
  if (listed > 0)
    out += "</tbody></table>\n<p class=\"note\">before, now: the test's median (or its verdict); change: (now &minus; before) / before; "
           "a slowdown counts once it exceeds the threshold and both runs' noise; re-timed: compare --confirm timed NEW's library "
           "against BASE's, paired, now.</p>\n";
  if (listed > kMaxFailures) out += fmt::format("<p class=\"note\">…and {} more regressions.</p>\n", listed - kMaxFailures);
  if (listed == 0) out += "<p class=\"empty\">No test regressed.</p>\n";
  if (rc.trends) out += trend_table(rc);
  return out + "</section>\n";
}

namespace {

// The page's head and its header: the run's verdict in one line, its chips, cards and sections.
std::string html_head(const RunRecord& run, const std::vector<const TestResult*>& failures, std::map<Verdict, std::size_t>& by_verdict,
                      const ReportComparison* compared) {
  const Scores& s = run.scores;
  std::size_t unusable = 0;
  for (const auto& op : run.ops) unusable += op.errors.empty() ? 0 : 1;

  std::string verdict, state;
  if (!failures.empty()) verdict = fmt::format("{} of {} failing", failures.size(), plural(run.tests.size(), "test")), state = "bad";
  else if (unusable) verdict = fmt::format("{} could not be used", plural(unusable, "op")), state = "bad";
  else if (run.tests.empty()) verdict = "no tests ran", state = "none";
  else if (s.passed == 0) verdict = fmt::format("all {} skipped", plural(run.tests.size(), "test")), state = "none";
  else if (by_verdict[Verdict::skipped] == 0) verdict = fmt::format("all {} passed", plural(run.tests.size(), "test")), state = "good";
  else  // what ran passed; say how much did not run, and do not call a mostly skipped run green
    verdict = fmt::format("{} passed, {} skipped", plural(s.passed, "test"), by_verdict[Verdict::skipped]),
    state = by_verdict[Verdict::skipped] > static_cast<std::size_t>(s.passed) ? "none" : "good";

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>BackendBench: {}</title>\n<style>{}</style>\n</head>\n<body>\n", h(verdict), kStyle);

  // Header.
  const std::string host = run.host.is_object() ? run.host.value("hostname", std::string()) : std::string();
  out += fmt::format("<header class=\"{}\"><div class=\"inner\">\n<h1>BackendBench: <span class=\"verdict\">{}</span></h1>\n", state, h(verdict));
  out += fmt::format("<div class=\"meta\">{} of {}{}{}{}{}</div>\n", plural(s.impls.size(), "implementation"), plural(run.ops.size(), "op"),
                     host.empty() ? "" : " on " + h(host), run.started_at.empty() ? "" : " · started " + h(run.started_at),
                     run.wall_time > 0 ? fmt::format(" · {:.1f} s", run.wall_time) : "",
                     run.shard.count > 1 ? fmt::format(" · shard {}/{}", run.shard.index + 1, run.shard.count) : "");
  if (!run.command.empty()) out += fmt::format("<div class=\"meta\"><code>{}</code></div>\n", h(run.command, 1000));
  if (!run.interrupted.empty())
    out += fmt::format("<p><strong>Interrupted run ({}):</strong> the tests that finished before the signal.</p>\n", h(run.interrupted));
  else if (!run.complete)
    out += "<p><strong>Incomplete run:</strong> read back from results.jsonl; the run did not finish.</p>\n";
  if (compared && compared->comparison)
    out += fmt::format("<p><strong>Compared with {}:</strong> {}.</p>\n", h(compared->base_label, 300),
                       compared->comparison->regressions() == 0
                           ? std::string("no regression")
                           : plural(static_cast<std::size_t>(compared->comparison->regressions()), "regression"));
  out += "<div class=\"chips\">";
  for (const auto& [v, n] : by_verdict) out += fmt::format("<span class=\"badge {}\">{} {}</span>", verdict_class(v), verdict_name(v), n);
  out += "</div>\n<div class=\"cards\">";
  auto card = [&](const std::string& value, const std::string& key) {
    out += fmt::format("<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>", h(value), h(key));
  };
  card(format_percent(s.correctness_rate), "correctness rate");
  card(format_speedup(s.geomean_speedup),
       s.rule == ScoreRule::strict ? "geomean speedup (every implementation; a case that did not pass as 1.0)" : "geomean speedup (correct implementations)");
  if (s.rule != ScoreRule::standard) card(score_rule_name(s.rule), "scores: a refused case is a failure");
  for (const auto& [p, share] : s.perf_at) card(format_percent(share), fmt::format("perf@{:g}", p));
  int correct = 0, ran = 0;
  for (const auto& is : s.impls) correct += is.fully_correct ? 1 : 0, ran += is.ran() ? 1 : 0;
  card(fmt::format("{} / {}", correct, ran), "implementations fully correct");
  out += "</div>\n<nav>";
  if (compared && compared->comparison) out += "<a href=\"#compared\">Compared</a>";
  out += "<a href=\"#failures\">Failures</a><a href=\"#speedup\">Speedup</a><a href=\"#bandwidth\">Bandwidth</a>"
         "<a href=\"#timing\">Timing</a><a href=\"#cases\">Per case</a><a href=\"#implementations\">Implementations</a><a href=\"#skipped\">Skipped</a>"
         "<a href=\"#tests\">All tests</a><a href=\"#provenance\">Provenance</a>";
  out += "</nav>\n</div></header>\n<main>\n";

  return out;
}

// Failures: by implementation first (how many of its tests failed, and how), then each group of
// alike failures as one row.
std::string failures_section(const RunRecord& run, std::vector<const TestResult*> failures) {
  std::string out;
  out += fmt::format("<section id=\"failures\">\n<h2>Failures <span class=\"count\">{}</span></h2>\n", failures.size());
  if (failures.empty()) out += "<p class=\"empty\">No test failed.</p>\n";
  else {
    // By implementation first: how many of its tests failed, and how.
    std::vector<std::pair<std::string, std::map<Verdict, std::size_t>>> by_impl;
    std::map<std::string, std::size_t> tests_of_impl;
    for (const auto& t : run.tests) ++tests_of_impl[t.id.impl];
    for (const auto* t : failures) {
      auto it = std::find_if(by_impl.begin(), by_impl.end(), [&](const auto& e) { return e.first == t->id.impl; });
      if (it == by_impl.end()) it = by_impl.insert(by_impl.end(), {t->id.impl, {}});
      ++it->second[t->outcome.verdict];
    }
    out += "<table class=\"by-impl\"><thead><tr><th>implementation</th><th class=\"num\">failing</th><th>verdicts</th></tr></thead><tbody>\n";
    for (const auto& [impl, counts] : by_impl) {
      std::size_t n = 0;
      std::string chips;
      for (const auto& [v, k] : counts) n += k, chips += fmt::format("<span class=\"badge {}\">{} {}</span> ", verdict_class(v), verdict_name(v), k);
      out += fmt::format("<tr><td class=\"name\">{}</td><td class=\"num\">{} of {}</td><td>{}</td></tr>\n", h(impl), n, tests_of_impl[impl], chips);
    }
    out += "</tbody></table>\n";
    std::stable_sort(failures.begin(), failures.end(), [&](const TestResult* a, const TestResult* b) {
      auto rank = [&](const TestResult* t) {
        return std::find_if(by_impl.begin(), by_impl.end(), [&](const auto& e) { return e.first == t->id.impl; }) - by_impl.begin();
      };
      return rank(a) < rank(b);
    });
    // Failures of one implementation with one verdict whose messages differ only in their numbers
    // are one row (as the console groups them): the first in full, the others' cases under it.
    std::vector<std::vector<const TestResult*>> rows;
    std::map<std::tuple<std::string, Verdict, std::string>, std::size_t> row_of;
    for (const auto* t : failures) {
      auto [it, fresh] = row_of.try_emplace({t->id.impl, t->outcome.verdict, message_shape(t->outcome.message)}, rows.size());
      if (fresh) rows.emplace_back();
      rows[it->second].push_back(t);
    }
    out += "<table class=\"tests\"><thead><tr><th>verdict</th><th>implementation</th><th>case</th><th>device</th><th>message and details</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < rows.size() && i < kMaxFailures; ++i) {
      const auto& t = *rows[i].front();
      std::string alike;
      if (rows[i].size() > 1) {
        std::string cases;
        for (std::size_t k = 1; k < rows[i].size() && k <= kMaxAlike; ++k)
          cases += fmt::format("<li><span class=\"name\">{}{}</span> {}: {}</li>", h(rows[i][k]->id.case_id),
                               rows[i][k]->id.repeat > 0 ? fmt::format(" #{}", rows[i][k]->id.repeat) : "", h(device_label(*rows[i][k])),
                               h(first_line(message_headline(rows[i][k]->outcome.message), 300)));
        if (rows[i].size() - 1 > kMaxAlike) cases += fmt::format("<li>…and {} more</li>", rows[i].size() - 1 - kMaxAlike);
        alike = fmt::format("<details class=\"alike\"><summary>and {} like it</summary><ul>{}</ul></details>", plural(rows[i].size() - 1, "more case"), cases);
      }
      out += fmt::format("<tr class=\"failure\"><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}{}</td><td>{}</td><td><div class=\"msg\">{}</div>{}</td></tr>\n",
                         badge(t.outcome.verdict), h(t.id.impl), h(t.id.case_id), t.id.repeat > 0 ? fmt::format(" #{}", t.id.repeat) : "", h(device_label(t)),
                         t.outcome.message.empty() ? "<span class=\"empty\">no message</span>" : h(t.outcome.message),
                         mismatch_line(t) + crash_details(t) + printed(t) + alike);
    }
    out += "</tbody></table>\n";
    if (rows.size() > kMaxFailures)
      out += fmt::format("<p class=\"note\">…and {} more groups of failing tests (junit.xml and results.json have them all).</p>\n", rows.size() - kMaxFailures);
  }
  return out + "</section>\n";
}

std::string implementations_section(const RunRecord& run) {
  const Scores& s = run.scores;
  std::string out;
  out += fmt::format("<section id=\"implementations\">\n<h2>Implementations <span class=\"count\">{}</span></h2>\n", s.impls.size());
  if (s.impls.empty()) out += "<p class=\"empty\">No implementations.</p>\n";
  else {
    const auto verdicts = verdict_counts_by_impl(run);
    out += "<table><thead><tr><th>op</th><th>implementation</th><th>status</th><th class=\"num\">passed</th><th class=\"num\">failed</th>"
           "<th class=\"num\">skipped</th><th class=\"num\">speedup</th><th>verdicts</th></tr></thead><tbody>\n";
    for (const auto& is : s.impls) {
      const std::string status = impl_status(is);
      auto it = verdicts.find(is.impl);
      out += fmt::format("<tr><td>{}</td><td class=\"name\">{}</td><td><span class=\"badge {}\">{}</span></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                         h(is.op), h(is.impl), status == "correct" ? "pass" : status == "failed" ? "fail" : "skip", h(status), is.passed, is.failed,
                         is.skipped, is.fully_correct ? h(format_speedup(is.speedup) + mode_speedups_text(is.speedup_by_mode)) : h(status),
                         it == verdicts.end() ? "" : h(it->second));
    }
    out += "</tbody></table>\n";
  }
  return out + "</section>\n";

}

std::string skipped_section(const RunRecord& run, std::map<Verdict, std::size_t>& by_verdict) {
  std::string out;
  const auto groups = skip_groups(run);
  out += fmt::format("<section id=\"skipped\">\n<h2>Skipped <span class=\"count\">{}</span></h2>\n", by_verdict[Verdict::skipped]);
  if (groups.empty()) out += "<p class=\"empty\">Nothing was skipped.</p>\n";
  else {
    out += "<ul class=\"skips\">\n";
    for (std::size_t i = 0; i < groups.size() && i < 100; ++i) {
      const auto& g = groups[i];
      std::string who;
      for (std::size_t k = 0; k < g.impls.size() && k < 20; ++k)
        who += fmt::format("{}<code>{}</code> ({})", k ? ", " : "", h(g.impls[k].first), g.impls[k].second);
      if (g.impls.size() > 20) who += fmt::format(" and {} more", g.impls.size() - 20);
      out += fmt::format("<li><b>{}</b>: {}<br>{}</li>\n", plural(g.tests, "test"), h(g.reason, 1000), who);
    }
    if (groups.size() > 100) out += fmt::format("<li>…and {} more reasons</li>\n", groups.size() - 100);
    out += "</ul>\n";
  }
  return out + "</section>\n";

}

std::string all_tests_section(const RunRecord& run, const std::map<Verdict, std::size_t>& by_verdict) {
  std::string out;
  out += fmt::format("<section id=\"tests\">\n<h2>All tests <span class=\"count\">{}</span></h2>\n", run.tests.size());
  if (run.tests.empty()) out += "<p class=\"empty\">No tests ran.</p>\n";
  else {
    out += "<div class=\"filter\"><input id=\"test-filter\" type=\"search\" placeholder=\"filter: implementation, case, message\">"
           "<select id=\"verdict-filter\"><option value=\"\">every verdict</option>";
    for (const auto& [v, n] : by_verdict) out += fmt::format("<option value=\"{0}\">{0}</option>", verdict_name(v));
    out += "</select><span id=\"shown\" class=\"note\"></span></div>\n";
    out += "<table id=\"all-tests\"><thead><tr><th>verdict</th><th>implementation</th><th>case</th><th>device</th><th class=\"num\">median</th>"
           "<th class=\"num\">speedup</th><th class=\"num\">% peak</th><th>message</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < run.tests.size() && i < kMaxTestRows; ++i) {
      const auto& t = run.tests[i];
      out += fmt::format("<tr data-verdict=\"{}\"><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}{}</td><td>{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                         verdict_name(t.outcome.verdict), badge(t.outcome.verdict), h(t.id.impl), h(t.id.case_id), t.id.repeat > 0 ? fmt::format(" #{}", t.id.repeat) : "",
                         h(device_label(t)), timing_cell(t), t.outcome.verdict == Verdict::pass && finite(t.performance.speedup) ? fmt_ratio(*t.performance.speedup) : "",
                         finite(t.performance.peak_pct) ? fmt::format("{:.1f}%", *t.performance.peak_pct) : "", h(first_line(message_headline(t.outcome.message), 300)));
    }
    out += "</tbody></table>\n";
    if (run.tests.size() > kMaxTestRows)
      out += fmt::format("<p class=\"note\">The first {} of {} tests are listed (results.json has them all).</p>\n", kMaxTestRows, run.tests.size());
  }
  return out + "</section>\n";

}

std::string provenance_section(const RunRecord& run) {
  std::string out;
  nlohmann::json prov = {{"command", run.command}, {"started_at", run.started_at}, {"finished_at", run.finished_at}, {"root", run.root},
                         {"sweep_id", run.sweep_id}, {"host", run.host}, {"devices", run.devices}, {"options", run.options},
                         {"provenance", run.provenance}};
  nlohmann::json seeds = nlohmann::json::object();
  for (const auto& op : run.ops) seeds[op.op] = op.seed;
  prov["seeds"] = seeds;
  out += "<section id=\"provenance\">\n<h2>Provenance</h2>\n<details><summary>host, tool, options, plugins' hashes</summary>\n<pre>";
  out += h(prov.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), 256 * 1024);
  out += "</pre></details>\n</section>\n</main>\n";
  return out;
}

}  // namespace

std::string html_report(const RunRecord& run, const ReportComparison* compared) {
  std::vector<const TestResult*> failures;
  std::map<Verdict, std::size_t> by_verdict;
  for (const auto& t : run.tests) {
    ++by_verdict[t.outcome.verdict];
    if (is_failure(t.outcome.verdict)) failures.push_back(&t);
  }
  std::string out = html_head(run, failures, by_verdict, compared);
  // Ops that could not be used.
  for (const auto& op : run.ops)
    for (const auto& e : op.errors) out += fmt::format("<p><span class=\"badge fail\">UNUSABLE</span> <b>{}</b>: {}</p>\n", h(op.op), h(e));
  // What changed since the run compared with first (compare --html: the regressions lead), then
  // the failures.
  if (compared && compared->comparison) out += comparison_section(*compared);
  out += failures_section(run, failures);
  out += "<section id=\"speedup\">\n<h2>Speedup per implementation <span class=\"count\">geomean of baseline median / its median over its timed cases, log scale</span></h2>\n";
  out += speedup_chart(run) + "</section>\n";
  out += "<section id=\"bandwidth\">\n<h2>Percent of peak bandwidth <span class=\"count\">per timed case, of the device's measured peak bandwidth</span></h2>\n";
  out += bandwidth_chart(run) + "</section>\n";
  out += "<section id=\"timing\">\n<h2>Timing spread <span class=\"count\">per timed case, log scale</span></h2>\n";
  out += timing_chart(run) + "</section>\n";
  out += "<section id=\"cases\">\n<h2>Per case <span class=\"count\">each case's implementations side by side</span></h2>\n";
  out += case_table_html(run) + "</section>\n";
  out += implementations_section(run) + skipped_section(run, by_verdict) + all_tests_section(run, by_verdict) + provenance_section(run);
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace bb
