#include "commands/list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/skip_rules.hpp"

namespace bb {

int print_listing(const SweepPlan& plan) {
  int status = 0;
  for (const auto& u : plan.unusable) {
    fmt::print(stderr, "error: {}\n", u.error);
    status = 2;
  }
  for (const auto& p : plan.ops) {
    fmt::print("{}  ({})\n", p.folder.name, p.folder.manifest.string());
    fmt::print("  reference: {}\n", p.reference.name);
    fmt::print("  baseline:  {}\n", p.baselines.empty() ? "none" : p.baseline_names());
    // What each implementation declares it does not support (dtypes, preconditions) is SKIPPED.
    std::vector<std::vector<std::string>> skipped_by(p.cases.size());
    for (const auto& i : p.impls) {
      std::size_t skips = 0;
      for (std::size_t k = 0; k < p.cases.size(); ++k)
        if (p.cases[k].runs_on(i.device) && !unsupported_reason(i.info, p.cases[k]).empty()) {
          skipped_by[k].push_back(i.stem);
          ++skips;
        }
      fmt::print("  impl:      {}{}{}{}\n", i.name, i.info.version.empty() ? "" : "  (version " + i.info.version + ")",
                 i.info.preconditions.empty() ? "" : fmt::format("  preconditions: {}", fmt::join(i.info.preconditions, ", ")),
                 skips ? fmt::format("  (skips {} of {} cases)", skips, p.cases.size()) : "");
    }
    for (const auto& w : p.warnings) fmt::print("  warning:   {}\n", w);
    for (const auto& e : p.failures) {
      fmt::print("  error:     {}\n", e.error);
      status = 2;
    }
    for (std::size_t k = 0; k < p.cases.size(); ++k)
      fmt::print("  case:      {}{}\n", p.cases[k].id,
                 skipped_by[k].empty() ? "" : fmt::format("  (SKIPPED by {})", fmt::join(skipped_by[k], ", ")));
  }
  return status;
}

}  // namespace bb
