// OVERALL_SUMMARY.md: the run for a CI job summary (GitHub's $GITHUB_STEP_SUMMARY takes up to
// 1 MiB, GitLab shows Markdown artifacts), so it stays small whatever the run's size: a title
// with the verdict, the scores, a table of ops and of implementations, the failing tests (the
// first kMaxFailureRows), the skip reasons grouped, and the provenance collapsed in <details>.
// Every list is capped; a run of 100k failing tests gives a few tens of KB.
//
// Text from the run (plugin messages, names) is escaped for Markdown and for the HTML that
// GitHub and GitLab let through: it cannot open a table cell, a link, a tag or an emphasis.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/report_files.hpp"
#include "report/report_text.hpp"

namespace bb {

namespace {

constexpr std::size_t kMaxFailureRows = 50;
constexpr std::size_t kMaxOps = 50;
constexpr std::size_t kMaxImpls = 100;
constexpr std::size_t kMaxSkipReasons = 20;
constexpr std::size_t kMaxSkipImpls = 10;     // implementations named per skip reason
constexpr std::size_t kMaxCell = 240;         // bytes of a message in a table cell
constexpr std::size_t kMaxProvenance = 12 * 1024;

// Text from the run in a line or a table cell, at most `max_bytes` of it.
std::string md(std::string_view raw, std::size_t max_bytes = kMaxCell) { return markdown_inline(raw, max_bytes); }

// The title (the verdict), the scores' line and where the run ran.
std::string summary_title(const RunRecord& run, std::size_t failures, std::size_t unusable_ops) {
  const Scores& s = run.scores;
  std::string out;
  // Title: the verdict.
  if (run.tests.empty() && unusable_ops == 0) out += "# BackendBench: no tests ran\n\n";
  else if (failures == 0 && unusable_ops == 0 && s.passed == 0)
    out += fmt::format("# BackendBench: all {} skipped\n\n", plural(run.tests.size(), "test"));
  else if (failures == 0 && unusable_ops == 0)
    out += fmt::format("# ✅ BackendBench: all {} passed\n\n", plural(run.tests.size() - static_cast<std::size_t>(s.skipped), "test"));
  else if (failures == 0)
    out += fmt::format("# ❌ BackendBench: {} could not be used\n\n", plural(unusable_ops, "op"));
  else
    out += fmt::format("# ❌ BackendBench: {} of {} failing\n\n", failures, plural(run.tests.size(), "test"));

  if (!run.interrupted.empty()) out += fmt::format("> **Interrupted run** ({}): the tests that finished before the signal.\n\n", run.interrupted);
  else if (!run.complete) out += "> **Incomplete run**: read back from results.jsonl; the run did not finish.\n\n";
  std::string perf;
  for (const auto& [p, share] : s.perf_at) perf += fmt::format(" · perf@{:g} **{}**", p, format_percent(share));
  out += fmt::format("**{}** passed · **{}** failed · **{}** skipped · correctness **{}** · geomean speedup **{}**{}\n\n", s.passed, s.failed,
                     s.skipped, format_percent(s.correctness_rate), format_speedup(s.geomean_speedup), perf);
  if (s.rule != ScoreRule::standard) out += fmt::format("> Scored **{}**\n\n", md(score_rule_note(s.rule)));
  out += fmt::format("{} of {} on {}", plural(s.impls.size(), "implementation"), plural(run.ops.size(), "op"),
                     md(run.host.is_object() ? run.host.value("hostname", std::string("?")) : std::string("?")));
  if (run.wall_time > 0) out += fmt::format(" in {:.1f} s", run.wall_time);
  if (run.shard.count > 1) out += fmt::format(", shard {}/{}", run.shard.index + 1, run.shard.count);
  if (!run.merged_shards.empty()) out += fmt::format(", merged from {}", plural(run.merged_shards.size(), "shard"));
  if (run.repeats > 1) out += fmt::format(", {} repeats", run.repeats);
  out += fmt::format(", exit status {}\n\n", run.exit_code);

  return out;
}

std::string operators_md(const RunRecord& run) {
  const Scores& s = run.scores;
  std::string out;
  if (!s.ops.empty()) {
    out += "## Operators\n\n| op | implementations | correct | geomean speedup | reference | baseline |\n|---|---:|---:|---:|---|---|\n";
    std::map<std::string, const OpReport*> reports;
    for (const auto& op : run.ops) reports[op.op] = &op;
    for (std::size_t i = 0; i < s.ops.size() && i < kMaxOps; ++i) {
      const auto& os = s.ops[i];
      const OpReport* r = reports.count(os.op) ? reports[os.op] : nullptr;
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md(os.op), os.impls, os.correct_impls, format_speedup(os.geomean_speedup) + mode_speedups_text(os.speedup_by_mode),
                         r ? md(r->reference) : "", r && !r->baseline.empty() ? md(r->baseline) : "-");
    }
    if (s.ops.size() > kMaxOps) out += fmt::format("\n…and {} more ops (operator_summary.csv has them all).\n", s.ops.size() - kMaxOps);
    out += "\n";
  }

  return out;
}

// Implementations: the failed ones first.
std::string implementations_md(const RunRecord& run) {
  const Scores& s = run.scores;
  std::string out;
  if (!s.impls.empty()) {
    std::vector<const ImplScore*> impls;
    for (const auto& is : s.impls) impls.push_back(&is);
    std::stable_sort(impls.begin(), impls.end(), [](const ImplScore* a, const ImplScore* b) { return (a->failed > 0) > (b->failed > 0); });
    const auto verdicts = verdict_counts_by_impl(run);
    out += "## Implementations\n\n| implementation | status | passed | failed | skipped | speedup | verdicts |\n|---|---|---:|---:|---:|---:|---|\n";
    for (std::size_t i = 0; i < impls.size() && i < kMaxImpls; ++i) {
      const auto& is = *impls[i];
      const std::string status = impl_status(is);
      std::string speed = is.fully_correct ? format_speedup(is.speedup) : status;
      if (is.fully_correct && is.speedup && is.speedup_low && is.speedup_high)
        speed += fmt::format(" [{:.2f}, {:.2f}]{}", *is.speedup_low, *is.speedup_high, is.significant() ? "" : " n.s.");
      auto it = verdicts.find(is.impl);
      out += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} |\n", md(is.impl), status == "failed" ? "❌ " : status == "correct" ? "✅ " : "",
                         status, is.passed, is.failed, is.skipped, speed, it == verdicts.end() ? "" : md(it->second));
    }
    if (impls.size() > kMaxImpls) out += fmt::format("\n…and {} more implementations.\n", impls.size() - kMaxImpls);
    out += "\n";
  }

  return out;
}

std::string failing_tests_md(const std::vector<const TestResult*>& failures) {
  std::string out;
  if (!failures.empty()) {
    out += fmt::format("## Failing tests{}\n\n", failures.size() > kMaxFailureRows ? fmt::format(" (first {} of {})", kMaxFailureRows, failures.size()) : "");
    out += "| verdict | implementation | case | device | message |\n|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < failures.size() && i < kMaxFailureRows; ++i) {
      const auto& t = *failures[i];
      out += fmt::format("| **{}** | {} | {}{} | {} | {} |\n", verdict_name(t.outcome.verdict), md(t.id.impl), md(t.id.case_id),
                         t.id.repeat > 0 ? fmt::format(" #{}", t.id.repeat) : "", md(device_label(t)), md(t.outcome.message));
    }
    if (failures.size() > kMaxFailureRows)
      out += fmt::format("\n…and {} more failing tests (junit.xml and results.json have them all).\n", failures.size() - kMaxFailureRows);
    out += "\n";
  }

  return out;
}

// Skipped, by reason.
std::string skipped_md(const RunRecord& run) {
  std::string out;
  const auto groups = skip_groups(run);
  if (!groups.empty()) {
    out += "## Skipped\n\n";
    for (std::size_t i = 0; i < groups.size() && i < kMaxSkipReasons; ++i) {
      const auto& g = groups[i];
      std::string who;
      for (std::size_t k = 0; k < g.impls.size() && k < kMaxSkipImpls; ++k)
        who += fmt::format("{}{} ({})", k ? ", " : "", md(g.impls[k].first), g.impls[k].second);
      if (g.impls.size() > kMaxSkipImpls) who += fmt::format(" and {} more", g.impls.size() - kMaxSkipImpls);
      out += fmt::format("- {}: {}: {}\n", plural(g.tests, "test"), md(g.reason, 300), who);
    }
    if (groups.size() > kMaxSkipReasons) out += fmt::format("- …and {} more reasons\n", groups.size() - kMaxSkipReasons);
    out += "\n";
  }

  return out;
}

std::string scores_md(const Scores& s) {
  std::string out;
  out += "## Scores\n\n| score | value |\n|---|---:|\n";
  out += fmt::format("| tests (passed / failed / skipped) | {} / {} / {} |\n", s.passed, s.failed, s.skipped);
  out += fmt::format("| correctness rate | {} |\n", format_percent(s.correctness_rate));
  out += fmt::format("| rule | {} |\n", s.rule == ScoreRule::standard ? "standard" : md(score_rule_note(s.rule)));
  out += fmt::format("| geomean speedup ({}) | {} |\n",
                     s.rule == ScoreRule::strict ? "every implementation that ran" : "fully correct implementations", format_speedup(s.geomean_speedup));
  for (const auto& [p, share] : s.perf_at) out += fmt::format("| perf@{:g} | {} |\n", p, format_percent(share));
  out += "\n";

  return out;
}

std::string provenance_md(const RunRecord& run) {
  std::string out;
  nlohmann::json prov = {{"command", run.command},    {"started_at", run.started_at}, {"finished_at", run.finished_at},
                         {"root", run.root},          {"sweep_id", run.sweep_id},     {"host", run.host},
                         {"provenance", run.provenance}};
  nlohmann::json seeds = nlohmann::json::object();
  for (const auto& op : run.ops) seeds[op.op] = op.seed;
  prov["seeds"] = seeds;
  out += "<details><summary>Provenance</summary>\n\n";
  out += markdown_code_block(prov.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), "json", kMaxProvenance);
  out += "\n</details>\n";
  return out;
}

}  // namespace

std::string overall_summary_md(const RunRecord& run) {
  std::vector<const TestResult*> failures;
  for (const auto& t : run.tests)
    if (is_failure(t.outcome.verdict)) failures.push_back(&t);
  std::size_t unusable_ops = 0;
  for (const auto& op : run.ops) unusable_ops += op.errors.empty() ? 0 : 1;
  std::string out = summary_title(run, failures.size(), unusable_ops);
  // Ops that could not be used.
  for (const auto& op : run.ops)
    for (const auto& e : op.errors) out += fmt::format("- ⛔ **{}**: {}\n", md(op.op), md(e, 400));
  if (unusable_ops) out += "\n";
  return out + operators_md(run) + implementations_md(run) + failing_tests_md(failures) + skipped_md(run) + scores_md(run.scores) +
         provenance_md(run);
}

}  // namespace bb
