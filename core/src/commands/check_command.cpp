// backendbench check [ROOT] [--ops a,b]: what a run would find, without running a kernel. Every
// manifest is parsed and its cases expanded; every library is loaded in a worker (as a run
// probes it) for its symbols, ABI version and info record; then what the run would make of
// them: the device each implementation runs on, the dtypes it declares against the ones the
// cases use, the reference that precedence picks and the baseline of each device. With --list,
// the listing a run's --list prints instead (list.hpp): both plan as the run does (plan_sweep).
//
//   0  everything usable (warnings are printed)     2  a manifest or a library is not
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands/cli.hpp"
#include "commands/commands.hpp"
#include "commands/list.hpp"
#include "dtype.hpp"
#include "plan/plan.hpp"
#include "plan/value_variants.hpp"
#include "plugin_library.hpp"
#include "plan/skip_rules.hpp"
#include "run/workers/executor.hpp"

namespace bb {

namespace {

const char* reference_kind(ReferenceChoice::Kind k) {
  switch (k) {
    case ReferenceChoice::Kind::library: return "a library exporting the reference";
    case ReferenceChoice::Kind::implementation: return "the first implementation, as no library exports a reference";
    case ReferenceChoice::Kind::identity: return "identity (output = a copy of the first input): nothing is checked";
  }
  return "";
}

std::string join_or(const std::vector<std::string>& v, const char* none) { return v.empty() ? none : fmt::format("{}", fmt::join(v, ", ")); }

struct CheckArgs {
  std::string root, root_flag, python, variants = default_variant_option();
  std::vector<std::string> ops, impls, cases;
  double probe_timeout = 30;
  bool list = false;
};

void add_check_options(CLI::App& app, CheckArgs& a) {
  app.description("Validates a custom-ops root without running a kernel: manifests, libraries (symbols, ABI version, devices, "
               "dtypes), the reference and baselines a run would use. Exit 0 when usable, 2 when not");
  app.add_option("ROOT", a.root, "the custom-ops root (default: the one a run uses)");
  app.add_option("--custom-ops-root", a.root_flag, "the custom-ops root, as a run names it (the same as ROOT)");  // a run's spelling
  app.add_option("--ops", a.ops, "ops to check, comma-separated (default: all)")->delimiter(',');
  app.add_option("--probe-timeout", a.probe_timeout, "seconds a library may take to load (default 30)")->check(CLI::Validator(
      [](std::string& t) {
        char* end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        return t.empty() || *end != '\0' || !(v > 0) ? "'" + t + "' is not a number above 0" : std::string();
      },
      "a number above 0"));
  app.add_option("--python", a.python, "the Python interpreter whose packages .py implementations import (default: python3 on the PATH)");
  app.add_option("--impls", a.impls, "implementations to check, comma-separated (default: all)")->delimiter(',');
  app.add_option("--cases", a.cases, "cases to check: case ids or globs of them, comma-separated (default: all)")->delimiter(',');
  app.add_option("--variants", a.variants, "the value variants of every correctness case, as a run makes them (backendbench --help)")
      ->capture_default_str();
  app.add_flag("--list", a.list, "print what a run would test (ops, implementations, cases), as backendbench --list does");
}

struct Tally {
  int errors = 0, warnings = 0, impls = 0;
};

// The cases an implementation will skip by what it declares (dtypes, preconditions), grouped by
// reason: a warning where there are any.
void check_declared_skips(const OpPlan& p, const Implementation& i, Tally& t) {
  std::vector<std::pair<std::string, std::vector<std::string>>> skips;
  std::size_t its_cases = 0, skipped = 0;
  for (const auto& c : p.cases) {
    if (!c.runs_on(i.device)) continue;
    ++its_cases;
    const std::string why = unsupported_reason(i.info, c);
    if (why.empty()) continue;
    ++skipped;
    auto g = std::find_if(skips.begin(), skips.end(), [&](const auto& e) { return e.first == why; });
    if (g == skips.end()) g = skips.insert(skips.end(), {why, {}});
    g->second.push_back(c.id);
  }
  if (skipped == 0) return;
  fmt::print("  warning    {}: {} of its {} case(s) will be SKIPPED:\n", i.name, skipped, its_cases);
  for (const auto& [why, ids] : skips)
    fmt::print("               {} case(s): {}: {}{}\n", ids.size(), why, fmt::join(ids.begin(), ids.begin() + std::min<std::size_t>(ids.size(), 4), ", "),
               ids.size() > 4 ? fmt::format(" and {} more", ids.size() - 4) : "");
  ++t.warnings;
}

// One usable op: its cases, reference, baseline, each implementation, its warnings and errors.
void check_op(const OpPlan& p, Tally& t) {
  std::set<std::string> used_dtypes;
  for (const auto& c : p.cases)
    for (DType d : c.dtypes()) used_dtypes.insert(dtype_name(d));
  fmt::print("{}  ({}): {} case(s), devices {}, dtypes {}\n", p.folder.name, p.folder.manifest.string(), p.cases.size(),
             fmt::join(p.manifest.devices, ", "), fmt::join(used_dtypes, ", "));
  fmt::print("  reference  {}: {}\n", p.reference.name, reference_kind(p.reference.kind));
  fmt::print("  baseline   {}\n", p.baselines.empty() ? "none: no speedups" : p.baseline_names());
  for (const auto& i : p.impls) {
    ++t.impls;
    fmt::print("  impl       {}: {}; dtypes {}; {}{}{}\n", i.name, i.device.empty() ? "no device of the op" : i.device,
               join_or(i.info.dtypes, "any"),
               i.info.preconditions.empty() ? "" : fmt::format("preconditions {}; ", fmt::join(i.info.preconditions, ", ")),
               is_python_implementation(i.library) ? std::string("Python")
                                                   : fmt::format("ABI {}.{}", i.info.abi_version >> 16, i.info.abi_version & 0xffff),
               i.info.version.empty() ? "" : "; version " + i.info.version);
    if (!i.unavailable.empty()) {
      fmt::print("  warning    {}: its tests will be SKIPPED here: {}\n", i.name, i.unavailable);
      ++t.warnings;
      continue;
    }
    check_declared_skips(p, i, t);
  }
  if (p.impls.empty()) {
    fmt::print("  warning    no implementation: nothing to check or time\n");
    ++t.warnings;
  }
  for (const auto& w : p.warnings) fmt::print("  warning    {}\n", w), ++t.warnings;
  for (const auto& e : p.failures) fmt::print("  error      {}\n", e.error), ++t.errors;
}

}  // namespace

int check_command(CLI::App& app, const CommandContext& ctx) {
  CheckArgs a;
  add_check_options(app, a);
  if (auto status = parse_command(app, ctx)) return *status;
  if (!a.root_flag.empty()) {
    if (!a.root.empty() && a.root != a.root_flag)
      return fmt::print(stderr, "error: two roots: {} and --custom-ops-root {}; give one\n", a.root, a.root_flag), 2;
    a.root = a.root_flag;
  }
  const std::filesystem::path dir = a.root.empty() ? default_root(ctx.self) : std::filesystem::path(a.root);

  // Planned as a run plans (plan_sweep): .py files are imported by a worker (the symbols exist,
  // the file imports); a BackendBench-py folder's gen_input.py is run once, with its reference,
  // to make its cases.
  PlanOptions options;
  options.probe_timeout = a.probe_timeout;
  auto set = parse_variant_set(a.variants);
  if (!set) return fmt::print(stderr, "error: --variants {}: {}\n", a.variants, set.error().message), 2;
  options.expansion.variants = *set;
  auto planned = plan_sweep({dir, a.ops, a.impls, a.cases, {}, a.python}, [&] { return make_isolated_executor(ctx.self.string()); }, options);
  if (!planned) return fmt::print(stderr, "error: {}\n", planned.error().message), 2;
  if (a.list) return print_listing(*planned);
  Tally t;
  // The ops in the order of their names, usable or not: an unusable one is its error.
  std::size_t next_unusable = 0;
  auto print_unusable_before = [&](const std::string& name) {  // "": all that are left
    for (; next_unusable < planned->unusable.size() && (name.empty() || planned->unusable[next_unusable].folder.name < name); ++next_unusable) {
      fmt::print("{}\n  error      {}\n", planned->unusable[next_unusable].folder.name, planned->unusable[next_unusable].error);
      ++t.errors;
    }
  };
  for (const OpPlan& p : planned->ops) {
    print_unusable_before(p.folder.name);
    check_op(p, t);
  }
  print_unusable_before("");
  fmt::print("\ncheck: {} op(s), {} implementation(s), {} error(s), {} warning(s){}\n", planned->ops.size() + planned->unusable.size(),
             t.impls, t.errors, t.warnings, t.errors ? "" : ": no kernel was run");
  return t.errors ? 2 : 0;
}

}  // namespace bb
