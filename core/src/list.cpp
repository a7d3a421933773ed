#include "list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "discovery.hpp"
#include "executor.hpp"
#include "job_runner.hpp"
#include "plan.hpp"

namespace bb {

int list_root(const SessionOptions& o) {
  auto discovered = discover_ops(o.root);
  if (!discovered) return fmt::print(stderr, "error: {}\n", discovered.error().message), 2;
  auto folders = filter_ops(std::move(*discovered), o.ops);
  if (!folders) return fmt::print(stderr, "error: {}\n", folders.error().message), 2;
  auto executor = o.isolate ? make_isolated_executor(o.worker_binary) : make_in_process_executor();
  std::vector<OpPlan> plans;
  int status = 0;
  for (const auto& f : *folders) {
    PlanOptions options;
    options.random_cases = o.random_cases;
    options.seed = o.seed;
    auto plan = plan_op(f, *executor, options);
    if (!plan) {
      fmt::print(stderr, "error: {}\n", plan.error().message);
      status = 2;
      continue;
    }
    plans.push_back(std::move(*plan));
  }
  if (auto s = filter_impls(plans, o.impls); !s) return fmt::print(stderr, "error: {}\n", s.error().message), 2;
  if (auto s = filter_cases(plans, o.cases, o.input_ids); !s) return fmt::print(stderr, "error: {}\n", s.error().message), 2;
  for (const auto& p : plans) {
    fmt::print("{}  ({})\n", p.folder.name, p.folder.manifest.string());
    fmt::print("  reference: {}\n", p.reference.name);
    fmt::print("  baseline:  {}\n", p.baselines.empty() ? "none" : p.baseline_names());
    // What each implementation declares it does not support (dtypes, preconditions) is SKIPPED.
    std::vector<std::vector<std::string>> skipped_by(p.cases.size());
    for (const auto& i : p.impls) {
      const std::string device = device_for(i.info, p.manifest);
      std::size_t skips = 0;
      for (std::size_t k = 0; k < p.cases.size(); ++k)
        if (p.cases[k].runs_on(device) && !unsupported_reason(i.info, p.cases[k]).empty()) {
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
