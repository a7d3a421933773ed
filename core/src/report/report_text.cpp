#include "devices/device_runtimes.hpp"
#include "report/report_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

namespace bb {

std::string format_seconds(double s) {
  if (s <= 0) return "-";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string first_line(std::string_view s, std::size_t max_bytes) {
  const auto nl = s.find_first_of("\r\n");
  return truncate_text(clean_text(s.substr(0, nl)), max_bytes);
}

std::string message_headline(std::string_view m) {
  const std::string_view first = m.substr(0, m.find_first_of("\r\n"));
  constexpr std::string_view kTrace = "Traceback (most recent call last):";
  const auto at = first.find(kTrace);
  if (at == std::string_view::npos) return std::string(first);
  // A Python traceback: what happened is its last line that is not indented ("ValueError: ...").
  std::string_view last;
  for (std::size_t end = m.size(); end > 0;) {
    const auto nl = m.find_last_of("\r\n", end - 1);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string_view line = m.substr(begin, end - begin);
    if (!line.empty() && line.front() != ' ' && line.front() != '\t' && line.find(kTrace) == std::string_view::npos && line.rfind("[...", 0) != 0) {
      last = line;
      break;
    }
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  if (last.empty()) return std::string(first);
  return std::string(first.substr(0, at)) + std::string(last) + " (a Python traceback)";
}

std::string message_shape(std::string_view m) {
  const std::string line = message_headline(m);
  std::string out;
  auto digit = [&](std::size_t i) { return i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); };
  for (std::size_t i = 0; i < line.size();) {
    // A number, its sign, point, exponent and hexadecimal digits included, is one '#'.
    const bool sign = (line[i] == '-' || line[i] == '+') && digit(i + 1) && (i == 0 || !std::isalnum(static_cast<unsigned char>(line[i - 1])));
    if (!digit(i) && !sign) {
      out += line[i++];
      continue;
    }
    if (sign) ++i;
    if (line.compare(i, 2, "0x") == 0) {
      i += 2;
      while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
    } else {
      while (digit(i)) ++i;
      if (i < line.size() && line[i] == '.' && digit(i + 1))
        for (++i; digit(i);) ++i;
      if (i < line.size() && (line[i] == 'e' || line[i] == 'E') &&
          (digit(i + 1) || ((i + 1 < line.size() && (line[i + 1] == '-' || line[i + 1] == '+')) && digit(i + 2))))
        for (i += 2; digit(i);) ++i;
    }
    if (out.empty() || out.back() != '#') out += '#';
  }
  return out;
}

std::vector<std::string> crash_lines(const nlohmann::json& crash, std::size_t max_frames) {
  std::vector<std::string> out;
  if (!crash.is_object()) return out;
  const auto frames = crash.value("frames", nlohmann::json::array());
  for (std::size_t i = 0; frames.is_array() && i < frames.size() && i < max_frames; ++i) {
    const auto& f = frames[i];
    if (!f.is_object()) continue;
    std::string where = f.value("function", f.value("pc", std::string("?")));
    if (f.contains("file")) where += fmt::format(" at {}:{}", f.value("file", std::string()), f.value("line", 0));
    if (f.contains("module")) where += fmt::format(" ({}+{})", std::filesystem::path(f.value("module", std::string())).filename().string(), f.value("offset", std::string()));
    out.push_back(fmt::format("#{} {}", i, truncate_text(clean_text(where), 300)));
  }
  if (frames.is_array() && frames.size() > max_frames) out.push_back(fmt::format("... {} more frames in results.json", frames.size() - max_frames));
  if (crash.contains("rerun")) out.push_back("again, alone, in the foreground: " + clean_text(crash.value("rerun", std::string())));
  return out;
}

bool finite(const std::optional<double>& x) { return x && std::isfinite(*x); }

std::string format_speedup(const std::optional<double>& x) { return finite(x) ? fmt::format("{:.2f}x", *x) : "-"; }

std::string format_percent(double share) { return std::isfinite(share) ? fmt::format("{:.1f}%", share * 100) : "-"; }

std::string failure_details(const TestResult& r) {
  std::string out = r.outcome.message;
  for (const auto& line : crash_lines(r.outcome.crash, 16)) out += "\n" + line;
  if (r.outcome.mismatch) {
    const auto& m = *r.outcome.mismatch;
    if (!out.empty()) out += "\n";
    out += fmt::format("output: {}\nmismatching elements: {} of {}", m.output.empty() ? "-" : m.output, m.count, m.total);
    if (m.unwritten > 0) out += fmt::format(" ({} unwritten)", m.unwritten);
    out += fmt::format("\nmax abs error: {:.6g}\nmax rel error: {:.6g}", m.max_abs_error, m.max_rel_error);
    if (!m.first_index.empty()) out += fmt::format("\nfirst mismatch at {}: actual {:.9g}, expected {:.9g}", m.first_index, m.actual, m.expected);
    out += fmt::format("\natol {:.3g}, rtol {:.3g}", m.atol, m.rtol);
  }
  return out;
}

std::string device_label(const TestResult& r) {
  if (r.id.device.empty()) return "cpu";
  if (is_cpu(r.id.device)) return r.id.device;
  return fmt::format("{}:{}", r.id.device, r.id.device_index);
}

std::string test_label(const TestResult& r) {
  return fmt::format("{}{} ({})", r.id.case_id, r.id.repeat > 0 ? fmt::format("#{}", r.id.repeat) : "", r.id.device.empty() ? "cpu" : r.id.device);
}

std::string timing_line(const Timing& t) {
  const auto& s = t.stats;
  return fmt::format("median {}, IQR {}..{}, min {}, max {}, ±{:.1f}%, {} samples ({})", format_seconds(s.median), format_seconds(s.q1),
                     format_seconds(s.q3), format_seconds(s.min), format_seconds(s.max), std::isfinite(s.rel_stdev) ? s.rel_stdev * 100 : 0.0,
                     s.samples, t.mode);
}

std::vector<SkipGroup> skip_groups(const RunRecord& run) {
  std::vector<SkipGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& t : run.tests) {
    if (t.outcome.verdict != Verdict::skipped) continue;
    const std::string reason = t.outcome.message.empty() ? "(no reason given)" : t.outcome.message;
    auto [it, fresh] = index.try_emplace(reason, groups.size());
    if (fresh) groups.push_back({reason, {}, 0});
    auto& g = groups[it->second];
    ++g.tests;
    auto imp = std::find_if(g.impls.begin(), g.impls.end(), [&](const auto& p) { return p.first == t.id.impl; });
    if (imp == g.impls.end()) g.impls.emplace_back(t.id.impl, 1);
    else ++imp->second;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const SkipGroup& a, const SkipGroup& b) { return a.tests > b.tests; });
  return groups;
}

std::map<std::string, std::string> verdict_counts_by_impl(const RunRecord& run) {
  std::map<std::string, std::map<std::string, int>> counts;
  for (const auto& t : run.tests)
    if (t.outcome.verdict != Verdict::pass) ++counts[t.id.impl][verdict_name(t.outcome.verdict)];
  std::map<std::string, std::string> out;
  for (const auto& [impl, by_verdict] : counts) {
    std::string s;
    for (const auto& [v, n] : by_verdict) s += fmt::format("{}{}={}", s.empty() ? "" : " ", v, n);
    out[impl] = s;
  }
  return out;
}

std::string impl_status(const ImplScore& s) {
  if (s.tests == 0) return "not run";
  if (!s.ran()) return "skipped";
  return s.fully_correct ? "correct" : "failed";
}

std::string plural(std::size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace bb
