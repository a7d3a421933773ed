#include "cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "version.hpp"

namespace bb {

std::filesystem::path self_executable(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return p;
  return std::filesystem::absolute(argv0, ec);
}

namespace {
std::filesystem::path default_root(const std::filesystem::path& exe) {
  const auto dir = exe.parent_path();
  for (const auto& candidate : {dir / "custom_ops", dir.parent_path() / "custom_ops", dir.parent_path() / "share" / "backendbench" / "custom_ops"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(candidate, ec)) return candidate;
  }
  return dir / "custom_ops";
}
}  // namespace

Expected<CliOptions> parse_cli(int argc, char** argv) {
  CliOptions o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  const auto exe = self_executable(argv[0]);
  o.session.worker_binary = exe.string();

  CLI::App app{"BackendBench: correctness and performance of custom-op implementations loaded at run time"};
  app.set_version_flag("--version", std::string("backendbench ") + kVersion);
  std::string suite = "custom_ops", backend = "custom_ops", root;
  app.add_option("--suite", suite, "test suite (custom_ops)")->check(CLI::IsMember({"custom_ops"}));
  app.add_option("--backend", backend, "backend (custom_ops)")->check(CLI::IsMember({"custom_ops"}));
  app.add_option("--custom-ops-root", root, "folder of <op>/gen_input.yaml and plugin libraries (default: the built custom_ops)");
  app.add_option("--ops", o.session.ops, "ops to run, comma-separated (all of their implementations)")->delimiter(',');
  app.add_option("--impls", o.session.impls, "implementations to run: <op>__<name> or <name>, comma-separated")->delimiter(',');
  app.add_option("--log-dir", o.log_dir, "where results go (default: bb-logs/<timestamp>)");
  app.add_flag("--no-log", o.no_log, "write no result files");
  app.add_flag("--list", o.list_only, "list ops, implementations and cases, then exit");
  app.add_flag("-v,--verbose", o.verbose, "a line for every test");
  bool no_isolate = false;
  app.add_flag("--no-isolate", no_isolate, "run tests in this process (for debuggers): a crash ends the run");
  app.add_option("--test-timeout", o.session.test_timeout, "seconds a test may take before it is TIMEOUT (timing budget added)")
      ->check(CLI::PositiveNumber);
  bool correctness_only = false;
  app.add_flag("--correctness-only", correctness_only, "check every case, time none");
  app.add_flag("--check-determinism", o.session.check_determinism, "call twice; outputs that differ are NONDETERMINISTIC");
  uint64_t seed = 0;
  auto* seed_opt = app.add_option("--seed", seed, "override every manifest's seed");
  auto& rule = o.session.timing.rule;
  app.add_option("--min-samples", rule.min_samples, "fewest samples per measurement")->check(CLI::PositiveNumber);
  app.add_option("--max-samples", rule.max_samples, "most samples per measurement")->check(CLI::PositiveNumber);
  app.add_option("--min-time", rule.min_time, "least measured seconds per measurement")->check(CLI::NonNegativeNumber);
  double max_noise_percent = rule.max_noise * 100;
  app.add_option("--max-noise", max_noise_percent, "stop once the relative standard deviation is below this percent")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", rule.timeout, "measurement budget in seconds: stop sampling after it, and report so")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup-time", o.session.timing.warmup_time, "seconds of warm-up calls before sampling")->check(CLI::NonNegativeNumber);
  bool hot = false;
  app.add_flag("--hot", hot, "hot timing: no cache flush between samples, calls batched (default: cold, caches flushed)");
  bool no_blocking = false;
  app.add_flag("--disable-blocking-kernel", no_blocking,
               "devices: launch without holding the stream behind a blocking kernel (launch latency is then timed)");
  double throttle_percent = o.session.timing.throttle_threshold * 100;
  app.add_option("--throttle-threshold", throttle_percent,
                 "devices: discard samples whose SM clock is below this percent of the maximum (0: off)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--throttle-recovery-delay", o.session.timing.throttle_recovery_delay,
                 "devices: seconds to wait after a throttled sample")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--perf-p", o.session.perf_p, "thresholds p for perf@p, comma-separated")->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    fmt::print("{}", app.help());
    o.exit_now = 0;
    return o;
  } catch (const CLI::CallForVersion& e) {
    fmt::print("{}\n", e.what());
    o.exit_now = 0;
    return o;
  } catch (const CLI::ParseError& e) {
    return make_error(fmt::format("{} (see backendbench --help)", e.what()));
  }
  o.session.isolate = !no_isolate;
  o.session.performance = !correctness_only;
  o.session.timing.rule.max_noise = max_noise_percent / 100.0;
  o.session.timing.mode = hot ? TimingMode::hot : TimingMode::cold;
  o.session.timing.blocking_kernel = !no_blocking;
  o.session.timing.throttle_threshold = throttle_percent / 100.0;
  if (*seed_opt) o.session.seed = seed;
  o.session.root = root.empty() ? default_root(exe) : std::filesystem::path(root);
  return o;
}

}  // namespace bb
