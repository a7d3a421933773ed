#include "commands/cli.hpp"

#include "commands/commands.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "build_info.hpp"
#include "plan/value_variants.hpp"
#include "run_files.hpp"
#include "run_record.hpp"
#include "version.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace bb {

namespace {
// Numbers in range, said plainly (CLI11's own say "not in range 0 to 1.8e308").
CLI::Validator number_at_least(double low, bool strict, const char* what) {
  return CLI::Validator(
      [low, strict, what](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || (strict ? !(v > low) : !(v >= low)))
          return fmt::format("'{}' is not {}", text, what);
        return "";
      },
      what);
}
CLI::Validator positive() { return number_at_least(0, true, "a number above 0"); }
CLI::Validator non_negative() { return number_at_least(0, false, "a number of 0 or more"); }
}  // namespace

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;  // a case id's parameters hold commas: correctness/small[dtype=float16,rows=7]
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string version_line() {
  return fmt::format("backendbench {} (commit {}{})", kVersion, kGitCommit, kGitDirty ? ", with uncommitted changes" : "");
}

std::filesystem::path self_executable(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return p;
  return std::filesystem::absolute(argv0, ec);
}

std::filesystem::path default_root(const std::filesystem::path& exe) {
  const auto dir = exe.parent_path();
  for (const auto& candidate : {dir / "custom_ops", dir.parent_path() / "custom_ops", dir.parent_path() / "share" / "backendbench" / "custom_ops"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(candidate, ec)) return candidate;
  }
  return dir / "custom_ops";
}

Expected<std::pair<int, int>> parse_shard(const std::string& text, const std::function<const char*(const char*)>& getenv) {
  auto number = [](const std::string& s) -> std::optional<long> {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stol(s);
  };
  if (text == "auto") {
    // Slurm array: SLURM_ARRAY_TASK_ID counts from SLURM_ARRAY_TASK_MIN (often 0 or 1).
    if (const char* id = getenv("SLURM_ARRAY_TASK_ID")) {
      const char* count = getenv("SLURM_ARRAY_TASK_COUNT");
      const char* min = getenv("SLURM_ARRAY_TASK_MIN");
      auto i = number(id), n = number(count ? count : ""), m = number(min ? min : "0");
      if (!i || !n || !m || *n < 1 || *i < *m || *i - *m >= *n)
        return make_error(fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_COUNT={} SLURM_ARRAY_TASK_MIN={}: expected "
                                      "MIN <= ID < MIN + COUNT (an array of consecutive tasks, --array=0-N or 1-N)",
                                      id, count ? count : "(unset)", min ? min : "(unset)"));
      return std::pair<int, int>{static_cast<int>(*i - *m), static_cast<int>(*n)};
    }
    // Kubernetes Indexed Job: JOB_COMPLETION_INDEX, and the completions count we are told.
    if (const char* id = getenv("JOB_COMPLETION_INDEX")) {
      const char* count = getenv("JOB_COMPLETIONS");
      if (!count) count = getenv("BACKENDBENCH_SHARD_COUNT");
      auto i = number(id), n = number(count ? count : "");
      if (!i || !n || *n < 1 || *i >= *n)
        return make_error(fmt::format("--shard auto: JOB_COMPLETION_INDEX={} with JOB_COMPLETIONS={}: set JOB_COMPLETIONS (or "
                                      "BACKENDBENCH_SHARD_COUNT) to the Job's completions, above the index",
                                      id, count ? count : "(unset)"));
      return std::pair<int, int>{static_cast<int>(*i), static_cast<int>(*n)};
    }
    return make_error("--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm array task) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set");
  }
  const auto slash = text.find('/');
  const auto i = number(text.substr(0, slash));
  std::optional<long> n;  // assigned, not chosen by ?: (which g++ 12 reads as maybe-uninitialised)
  if (slash != std::string::npos) n = number(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *i < 1 || *i > *n)
    return make_error(fmt::format("--shard {}: expected i/n with 1 <= i <= n (e.g. 2/3), or auto", text));
  return std::pair<int, int>{static_cast<int>(*i - 1), static_cast<int>(*n)};
}

Expected<std::pair<bool, std::vector<int>>> parse_devices(const std::string& text) {
  if (text.empty()) return std::pair<bool, std::vector<int>>{false, {}};
  if (text == "all") return std::pair<bool, std::vector<int>>{true, {}};
  std::vector<int> ordinals;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos)
      return make_error(fmt::format("--devices {}: '{}' is no device ordinal; expected all, or ordinals like 0,1", text, item));
    const int d = std::stoi(item);
    if (std::find(ordinals.begin(), ordinals.end(), d) == ordinals.end()) ordinals.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return std::pair<bool, std::vector<int>>{false, ordinals};
}

std::string ctest_devices() {
  // Under `ctest --resource-spec-file`, a test that declared RESOURCE_GROUPS gets
  // CTEST_RESOURCE_GROUP_0_GPUS=id:1,slots:1 (one group; ids of the spec's gpus).
  const char* groups = std::getenv("CTEST_RESOURCE_GROUP_COUNT");
  const char* gpus = std::getenv("CTEST_RESOURCE_GROUP_0_GPUS");
  if (!groups || !gpus) return "";
  std::string ids, s = gpus;
  for (std::size_t pos = s.find("id:"); pos != std::string::npos; pos = s.find("id:", pos + 3)) {
    const auto end = s.find_first_of(",;", pos);
    ids += (ids.empty() ? "" : ",") + s.substr(pos + 3, end == std::string::npos ? std::string::npos : end - pos - 3);
  }
  return ids;
}

namespace {

// --resume DIR: the options of the run in DIR, as session_options_json recorded them. Each is
// taken from that run unless the command line gives it; one the command line gives must then
// have the run's value if it belongs to the sweep (what its tests are, and how they are checked
// and timed), else the resume is refused, naming it; the others (where the root is, workers,
// devices, the test timeout, isolation, the perf@p thresholds) take the command line's value.
// The session still compares the sweep ids (a root whose content changed is another sweep).
struct RunOption {
  const char* key;   // in results.json's options
  const char* flag;  // on the command line
  bool sweep;        // given again, it must have the run's value
  std::function<void(const nlohmann::json&, SessionOptions&)> adopt;  // may throw nlohmann::json::exception
  std::function<std::string(const nlohmann::json&)> show;             // the value, as a command line says it
};

std::string number_text(const nlohmann::json& v, double scale = 1) {
  if (scale == 1 && v.is_number_integer()) return v.dump();
  return fmt::format("{:g}", v.get<double>() * scale);
}

// How a recorded value reads on a command line: a list, a number (times `scale`), a flag given
// where the value is `when`.
std::function<std::string(const nlohmann::json&)> show_list(const char* flag) {
  return [flag](const nlohmann::json& v) {
    return v.empty() ? fmt::format("no {}", flag) : fmt::format("{} {}", flag, fmt::join(v.get<std::vector<std::string>>(), ","));
  };
}
std::function<std::string(const nlohmann::json&)> show_number(const char* flag, double scale = 1) {
  return [flag, scale](const nlohmann::json& v) { return fmt::format("{} {}", flag, number_text(v, scale)); };
}
std::function<std::string(const nlohmann::json&)> show_flag(const char* flag, bool when) {
  return [flag, when](const nlohmann::json& v) { return v.get<bool>() == when ? std::string(flag) : fmt::format("no {}", flag); };
}

// What the sweep selects, and how each test is checked.
std::vector<RunOption> selection_run_options() {
  return {
      {"root", "--custom-ops-root", false, [](const auto& v, SessionOptions& o) { o.root = v.template get<std::string>(); },
       [](const auto& v) { return fmt::format("--custom-ops-root {}", v.template get<std::string>()); }},
      {"ops", "--ops", true, [](const auto& v, SessionOptions& o) { o.ops = v.template get<std::vector<std::string>>(); }, show_list("--ops")},
      {"impls", "--impls", true, [](const auto& v, SessionOptions& o) { o.impls = v.template get<std::vector<std::string>>(); },
       show_list("--impls")},
      {"cases", "--cases", true, [](const auto& v, SessionOptions& o) { o.cases = v.template get<std::vector<std::string>>(); },
       show_list("--cases")},
      {"input_ids", "--input-id", true, [](const auto& v, SessionOptions& o) { o.input_ids = v.template get<std::vector<int>>(); },
       [](const auto& v) {
         return v.empty() ? std::string("no --input-id") : fmt::format("--input-id {}", fmt::join(v.template get<std::vector<int>>(), ","));
       }},
      {"isolate", "--no-isolate", false, [](const auto& v, SessionOptions& o) { o.isolate = v.template get<bool>(); },
       show_flag("--no-isolate", false)},
      {"test_timeout_s", "--test-timeout", false, [](const auto& v, SessionOptions& o) { o.test_timeout = v.template get<double>(); },
       show_number("--test-timeout")},
      {"performance", "--correctness-only", true, [](const auto& v, SessionOptions& o) { o.performance = v.template get<bool>(); },
       show_flag("--correctness-only", false)},
      {"check_determinism", "--check-determinism", true,
       [](const auto& v, SessionOptions& o) { o.check_determinism = v.template get<bool>(); }, show_flag("--check-determinism", true)},
      {"seed", "--seed", true,
       [](const auto& v, SessionOptions& o) { o.seed = v.is_null() ? std::nullopt : std::optional<uint64_t>(v.template get<uint64_t>()); },
       [](const auto& v) { return v.is_null() ? std::string("no --seed") : fmt::format("--seed {}", v.dump()); }},
      {"random_cases", "--random-cases", true, [](const auto& v, SessionOptions& o) { o.expansion.random_cases = v.template get<int>(); },
       show_number("--random-cases")},
      {"variants", "--variants", true,
       [](const auto& v, SessionOptions& o) {
         auto set = parse_variant_set(v.template get<std::string>());
         if (!set) throw std::invalid_argument(set.error().message);
         o.expansion.variants = *set;
       },
       [](const auto& v) { return fmt::format("--variants {}", v.template get<std::string>()); }},
      {"modes", "--mode", true,
       [](const auto& v, SessionOptions& o) {
         if (v.is_null()) return o.modes.reset();
         auto modes = parse_modes(v.template get<std::string>());
         if (!modes) throw std::invalid_argument(modes.error().message);
         o.modes = *modes;
       },
       [](const auto& v) { return v.is_null() ? std::string("no --mode") : fmt::format("--mode {}", v.template get<std::string>()); }},
      {"check_backwards", "--check-backwards", true, [](const auto& v, SessionOptions& o) { o.check_backwards = v.template get<bool>(); },
       show_flag("--check-backwards", true)},
  };
}

// How each test is timed, and scored.
std::vector<RunOption> timing_run_options() {
  return {
      {"min_samples", "--min-samples", true,
       [](const auto& v, SessionOptions& o) { o.timing.rule.min_samples = v.template get<std::size_t>(); }, show_number("--min-samples")},
      {"max_samples", "--max-samples", true,
       [](const auto& v, SessionOptions& o) { o.timing.rule.max_samples = v.template get<std::size_t>(); }, show_number("--max-samples")},
      {"min_time_s", "--min-time", true, [](const auto& v, SessionOptions& o) { o.timing.rule.min_time = v.template get<double>(); },
       show_number("--min-time")},
      {"max_noise", "--max-noise", true, [](const auto& v, SessionOptions& o) { o.timing.rule.max_noise = v.template get<double>(); },
       show_number("--max-noise", 100)},
      {"timeout_s", "--timeout", true, [](const auto& v, SessionOptions& o) { o.timing.rule.timeout = v.template get<double>(); },
       show_number("--timeout")},
      {"warmup_time_s", "--warmup-time", true, [](const auto& v, SessionOptions& o) { o.timing.warmup_time = v.template get<double>(); },
       show_number("--warmup-time")},
      {"timing_mode", "--hot", true,
       [](const auto& v, SessionOptions& o) {
         const auto mode = v.template get<std::string>();
         if (mode != "hot" && mode != "cold") throw std::invalid_argument("expected hot or cold");
         o.timing.mode = mode == "hot" ? TimingMode::hot : TimingMode::cold;
       },
       [](const auto& v) { return v == "hot" ? std::string("--hot") : std::string("no --hot"); }},
      {"blocking_kernel", "--disable-blocking-kernel", true,
       [](const auto& v, SessionOptions& o) { o.timing.blocking_kernel = v.template get<bool>(); },
       show_flag("--disable-blocking-kernel", false)},
      {"l2_discard", "--l2-discard", true, [](const auto& v, SessionOptions& o) { o.timing.l2_discard = v.template get<bool>(); },
       show_flag("--l2-discard", true)},
      {"throttle_threshold", "--throttle-threshold", true,
       [](const auto& v, SessionOptions& o) { o.timing.throttle_threshold = v.template get<double>(); },
       show_number("--throttle-threshold", 100)},
      {"throttle_recovery_delay_s", "--throttle-recovery-delay", true,
       [](const auto& v, SessionOptions& o) { o.timing.throttle_recovery_delay = v.template get<double>(); },
       show_number("--throttle-recovery-delay")},
      {"score_rule", "--strict", false,
       [](const auto& v, SessionOptions& o) {
         auto rule = parse_score_rule(v.template get<std::string>());
         if (!rule) throw std::invalid_argument("expected \"standard\" or \"strict\"");
         o.score_rule = *rule;
       },
       [](const auto& v) { return v.template get<std::string>() == "strict" ? std::string("--strict") : std::string("no --strict"); }},
  };
}

// Where the tests run: devices, workers, shards, repeats.
std::vector<RunOption> placement_run_options() {
  return {
      {"perf_p", "--perf-p", false, [](const auto& v, SessionOptions& o) { o.perf_p = v.template get<std::vector<double>>(); },
       [](const auto& v) { return fmt::format("--perf-p {}", fmt::join(v.template get<std::vector<double>>(), ",")); }},
      {"devices", "--devices", false,
       [](const auto& v, SessionOptions& o) {
         if (v.is_string() && v != "all") throw std::invalid_argument("expected \"all\" or ordinals");
         o.all_devices = v.is_string();
         o.device_ordinals = v.is_string() ? std::vector<int>{} : v.template get<std::vector<int>>();
       },
       [](const auto& v) {
         return v.is_string() ? std::string("--devices all")
                : v.empty()   ? std::string("no --devices")
                              : fmt::format("--devices {}", fmt::join(v.template get<std::vector<int>>(), ","));
       }},
      {"jobs", "--jobs", false, [](const auto& v, SessionOptions& o) { o.cpu_workers = std::max(1, v.template get<int>()); },
       show_number("--jobs")},
      {"shard", "--shard", true,
       [](const auto& v, SessionOptions& o) {
         auto s = parse_shard(v.template get<std::string>());
         if (!s) throw std::invalid_argument(s.error().message);
         o.shard_index = s->first;
         o.shard_count = s->second;
       },
       [](const auto& v) { return v == "1/1" ? std::string("no --shard") : fmt::format("--shard {}", v.template get<std::string>()); }},
      {"repeats", "--repeat", true, [](const auto& v, SessionOptions& o) { o.repeats = std::max(1, v.template get<int>()); },
       show_number("--repeat")},
      {"run_id", "--run-id", true, [](const auto& v, SessionOptions& o) { o.run_id = v.template get<std::string>(); },
       [](const auto& v) { return v == "" ? std::string("no --run-id") : fmt::format("--run-id {}", v.template get<std::string>()); }},
  };
}

std::vector<RunOption> run_options() {
  std::vector<RunOption> all = selection_run_options();
  for (auto&& part : {timing_run_options(), placement_run_options()}) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// The selection compares as a set: --impls b,a is --impls a,b.
nlohmann::json comparable(const std::string& key, nlohmann::json v) {
  if ((key == "ops" || key == "impls" || key == "cases") && v.is_array()) {
    auto names = v.get<std::vector<std::string>>();
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }
  return v;
}

// `o` holds the command line's options; the run's (from `file`, in DIR `where`) fill in the
// rest. `given(flag)`: whether the command line gave that option.
Status adopt_run_options(const nlohmann::json& recorded, const std::string& where, const std::string& file,
                         const std::function<bool(const char*)>& given, SessionOptions& o) {
  if (!recorded.is_object() || recorded.empty())
    return make_error(fmt::format("--resume {}: {} records no options; give the run's command line again", where, file));
  const nlohmann::json here = session_options_json(o);
  for (const auto& opt : run_options()) {
    const auto it = recorded.find(opt.key);
    if (it == recorded.end()) {  // not recorded (an older run): the command line's
      if (std::string_view(opt.key) == "variants" && !given(opt.flag)) o.expansion.variants = 0;  // older runs had none
      continue;
    }
    try {
      if (!given(opt.flag)) {
        opt.adopt(*it, o);
        continue;
      }
      if (opt.sweep && comparable(opt.key, here.at(opt.key)) != comparable(opt.key, *it))
        return make_error(fmt::format("--resume {}: that run is another sweep: {} here, {} there; leave {} out to continue that run "
                                      "(its options are taken from {})",
                                      where, opt.show(here.at(opt.key)), opt.show(*it), opt.flag, file));
    } catch (const std::exception& e) {
      return make_error(fmt::format("--resume {}: {}: options.{} is {}: {}", where, file, opt.key, it->dump(), e.what()));
    }
  }
  return Ok{};
}

}  // namespace

namespace {
// What CLI11 fills before parse_cli makes CliOptions of it: lists as one text each (an option
// given twice takes its last value), flags that read the other way round, percentages.
struct RawCli {
  std::string suite = "custom_ops", backend = "custom_ops", root;
  std::string ops, impls, cases, input_ids, perf_p, resume, devices, shard, python, mode;
  std::string variants = default_variant_option();
  std::vector<std::string> copies = std::vector<std::string>(report_formats().size());
  bool no_isolate = false, correctness_only = false, hot = false, no_blocking = false, l2_discard = false, strict = false;
  double memory_gib = -1, max_noise_percent = 0, throttle_percent = 0;
  uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;
};

// What runs, and what a run writes and prints.
void add_selection_options(CLI::App& app, CliOptions& o, RawCli& r) {
  app.add_option("--suite", r.suite, "test suite (custom_ops)")->check(CLI::IsMember({"custom_ops"}));
  app.add_option("--backend", r.backend, "backend (custom_ops)")->check(CLI::IsMember({"custom_ops"}));
  app.add_option("--custom-ops-root", r.root, "folder of <op>/gen_input.yaml and plugin libraries (default: the built custom_ops)");
  app.add_option("--ops", r.ops, "ops to run, comma-separated (all of their implementations)");
  app.add_option("--impls", r.impls, "implementations to run: <op>__<name> or <name>, comma-separated");
  app.add_option("--cases", r.cases,
                 "cases to run: case ids or globs of them, comma-separated (correctness/*, 'performance/large*'; --list shows the ids)");
  app.add_option("--input-id", r.input_ids, "cases to run by index, 0-based in each op's order, comma-separated (tritonbench's --input-id)");
  app.add_option("--log-dir", o.log_dir, "where results go (default: bb-logs/<timestamp>)");
  app.add_option("--resume", r.resume,
                 "continue the run whose log dir (or results file) this is: its finished tests stand, the rest run; results go "
                 "there unless --log-dir says otherwise");
  app.add_flag("--no-log", o.no_log, "write no result files");
  app.add_flag("--list", o.list_only, "list ops, implementations and cases, then exit");
  app.add_flag("-v,--verbose", o.verbose, "a line for every test that ran (SKIPPED ones stay grouped by reason)");
  app.add_flag("-q,--quiet", o.quiet, "print only the final table");
  app.add_flag("--table", o.case_table,
               "print the per-case table at the end: each case's shapes, then per implementation its verdict, median, GB/s, TFLOP/s, "
               "% of peak, speedup and error figures (tests.csv has it as rows)");
  for (std::size_t i = 0; i < r.copies.size(); ++i) app.add_option(report_formats()[i].flag, r.copies[i], report_formats()[i].help);
}

// Where and how the tests run: devices, workers, shards, limits, and what each test checks.
void add_run_options(CLI::App& app, CliOptions& o, RawCli& r) {
  app.add_option("--devices", r.devices, "GPUs to use, one worker pool each: all, or ordinals 0,1,... (default: 0)");
  app.add_option("-j,--jobs", o.session.cpu_workers, "workers for CPU tests (correctness-only: per device too; default when timing: a quarter of the physical cores, at most 8, each timed pairing on a core of its own, 1 below 8 cores; else half the CPUs, at most 32)")
      ->check(CLI::Range(1, 1024))
      ->default_str("");  // 0 there means "the default above", not a value to show
  app.add_option("--shard", r.shard, "run part i of n of the sweep (1-based, i/n), or auto (Slurm array, Kubernetes Indexed Job)");
  app.add_option("--repeat", o.session.repeats, "run the sweep this many times")->check(CLI::Range(1, 100000));
  app.add_option("--run-id", o.session.run_id,
                 "names this run, so its shards can be told from another run's (default: $SLURM_ARRAY_JOB_ID, else $BACKENDBENCH_RUN_ID)");
  app.add_option("--skip-exit-code", o.session.skip_exit_code, "exit with this status when every selected test is SKIPPED");
  app.add_option("--fail-on-skip", o.session.fail_on_skip,
                 "exit 1 when more than PERCENT of the selected tests are SKIPPED (0: any), for CI jobs that must not lose coverage")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--python", r.python,
                 "the Python interpreter whose packages .py implementations import (default: python3 on the PATH, where it is the build's "
                 "Python or a venv of it)");
  app.add_flag("--no-isolate", r.no_isolate, "run tests in this process (for debuggers): a crash ends the run");
  app.add_option("--test-timeout", o.session.test_timeout, "seconds a test may take before it is TIMEOUT (timing budget added)")
      ->check(positive());
  app.add_option("--worker-memory-limit", r.memory_gib,
                 "GiB of heap a worker process may take (RLIMIT_DATA; 0: no limit; default: half of this machine's memory)")
      ->check(non_negative())
      ->default_str("");
  app.add_flag("--correctness-only", r.correctness_only, "check every case, time none");
  app.add_flag("--check-determinism", o.session.check_determinism, "call twice; outputs that differ are NONDETERMINISTIC");
  r.seed_option = app.add_option("--seed", r.seed, "override every manifest's seed (default: each manifest's own)")->default_str("");
  app.add_option("--random-cases", o.session.expansion.random_cases,
                 "add N correctness cases per sweep, their parameters drawn from its ranges by the seed")
      ->check(CLI::Range(0, 10000));
  app.add_option("--variants", r.variants,
                 "value variants of every correctness case (<case>~zeros, ...): default (zeros, tiny, huge, mixed, denormal), none, all, "
                 "or names joined by commas; the manifest says which inputs get which (docs/MANIFEST.md); BACKENDBENCH_VARIANTS sets "
                 "the default")
      ->capture_default_str();
  app.add_option("--mode", r.mode,
                 "the passes checked and timed, tritonbench's names: fwd (the forward), bwd (the backward alone, <op>_backward_impl), "
                 "fwd_bwd (the forward then the backward on its inputs, timed together), or several: fwd,bwd (default: what each op's "
                 "manifest declares: its backward's modes, else fwd)");
  app.add_flag("--check-backwards", o.session.check_backwards,
               "BackendBench-py folders (gen_input.py): check gradients as that suite does: loss = sum of the outputs, every floating input "
               "differentiable, compared at 1e-2, correctness tests only (an op with a gen_input.yaml runs the backward it declares)");
}

// How tests are timed, and how they are scored.
void add_timing_options(CLI::App& app, CliOptions& o, RawCli& r) {
  auto& rule = o.session.timing.rule;
  app.add_option("--min-samples", rule.min_samples, "fewest samples per measurement")->check(positive());
  app.add_option("--max-samples", rule.max_samples, "most samples per measurement")->check(positive());
  app.add_option("--min-time", rule.min_time, "least measured seconds per measurement")->check(non_negative());
  r.max_noise_percent = rule.max_noise * 100;
  app.add_option("--max-noise", r.max_noise_percent, "stop timing once the speedup's 99% interval (timed alone: the median's) is within +-this percent")
      ->check(positive());
  app.add_option("--timeout", rule.timeout, "measurement budget in seconds per side: stop timing after it, and report so")
      ->check(positive());
  app.add_option("--warmup-time", o.session.timing.warmup_time, "seconds of warm-up calls before sampling")->check(non_negative());
  app.add_flag("--hot", r.hot, "hot timing: no cache flush between samples, calls batched (default: cold, caches flushed)");
  app.add_flag("--disable-blocking-kernel", r.no_blocking,
               "devices: launch without holding the stream behind a blocking kernel (launch latency is then timed)");
  app.add_flag("--l2-discard", r.l2_discard,
               "devices, cold: between samples drop the call's own buffers from L2 instead of flushing all of L2 (several "
               "times cheaper for microsecond kernels; reads 6-22% faster than the flush for the shipped kernels: RUNNING.md)");
  r.throttle_percent = o.session.timing.throttle_threshold * 100;
  app.add_option("--throttle-threshold", r.throttle_percent,
                 "devices: discard samples whose SM clock is below this percent of the maximum (0: off)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--throttle-recovery-delay", o.session.timing.throttle_recovery_delay,
                 "devices: seconds to wait after a throttled sample")
      ->check(non_negative());
  app.add_option("--perf-p", r.perf_p, "thresholds p for perf@p, comma-separated (default 1)");
  app.add_flag("--strict", r.strict,
               "score for grading: a case the implementation refuses (its declared dtypes or preconditions, "
               "BB_ERR_UNSUPPORTED, NotImplementedError) is a failure, and a case that did not pass counts as no speedup");
}

// The lists: report copies, the selection, the case indices and the perf@p thresholds.
Status apply_lists(const RawCli& r, CliOptions& o) {
  for (std::size_t i = 0; i < r.copies.size(); ++i) {
    if (r.copies[i].empty()) continue;
    const ReportFormat& format = report_formats()[i];
    add_report_copy(o.report_copies, format, r.copies[i]);
    o.json_to_stdout = o.json_to_stdout || (format.to_stdout && r.copies[i] == "-");
  }
  o.session.ops = split_list(r.ops);
  o.session.impls = split_list(r.impls);
  o.session.cases = split_list(r.cases);
  for (const auto& id : split_list(r.input_ids)) {
    if (id.empty() || id.size() > 6 || id.find_first_not_of("0123456789") != std::string::npos)
      return make_error(fmt::format("--input-id {}: '{}' is no case index; expected indices like 0,3", r.input_ids, id));
    o.session.input_ids.push_back(std::stoi(id));
  }
  if (!r.perf_p.empty()) {
    o.session.perf_p.clear();
    for (const auto& p : split_list(r.perf_p)) {
      char* end = nullptr;
      const double v = std::strtod(p.c_str(), &end);
      if (p.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
        return make_error(fmt::format("--perf-p {}: '{}' is no threshold; expected positive numbers like 1,1.5", r.perf_p, p));
      o.session.perf_p.push_back(v);
    }
  }
  return Ok{};
}

// Devices, shard, run id, the flags and percentages, the variants.
Status apply_run(const RawCli& r, bool variants_given, CliOptions& o) {
  auto device_choice = parse_devices(r.devices.empty() ? ctest_devices() : r.devices);
  if (!device_choice) return device_choice.error();
  o.session.all_devices = device_choice->first;
  o.session.device_ordinals = device_choice->second;
  if (!r.shard.empty()) {
    auto s = parse_shard(r.shard);
    if (!s) return s.error();
    o.session.shard_index = s->first;
    o.session.shard_count = s->second;
  }
  if (o.session.run_id.empty())
    for (const char* var : {"SLURM_ARRAY_JOB_ID", "BACKENDBENCH_RUN_ID"})
      if (const char* v = std::getenv(var); v && *v) {
        o.session.run_id = v;
        break;
      }
  o.session.isolate = !r.no_isolate;
  o.session.python = r.python;
  if (r.memory_gib >= 0) o.session.worker_limits.memory_bytes = static_cast<std::size_t>(r.memory_gib * 1024 * 1024 * 1024);
  o.session.performance = !r.correctness_only;
  if (r.strict) o.session.score_rule = ScoreRule::strict;
  o.session.timing.rule.max_noise = r.max_noise_percent / 100.0;
  o.session.timing.mode = r.hot ? TimingMode::hot : TimingMode::cold;
  o.session.timing.blocking_kernel = !r.no_blocking;
  o.session.timing.l2_discard = r.l2_discard;
  o.session.timing.throttle_threshold = r.throttle_percent / 100.0;
  if (*r.seed_option) o.session.seed = r.seed;
  auto set = parse_variant_set(r.variants);
  if (!set)
    return make_error(fmt::format("--variants {}{}: {}", r.variants, variants_given ? "" : " (from BACKENDBENCH_VARIANTS)", set.error().message));
  o.session.expansion.variants = *set;
  if (!r.mode.empty()) {
    auto modes = parse_modes(r.mode);
    if (!modes) return make_error(fmt::format("--mode {}: {}", r.mode, modes.error().message));
    o.session.modes = *modes;
  }
  return Ok{};
}

// --resume: the run's options where the command line gives none (adopt_run_options), its
// finished tests, and its log dir.
Status apply_resume(const std::string& resume, const CLI::App& app, CliOptions& o) {
  auto run = load_run(resume);
  if (!run) return make_error(fmt::format("--resume {}: {}", resume, run.error().message));
  auto given = [&](const char* flag) { return app.count(flag) > 0; };
  if (auto s = adopt_run_options(run->options, resume, run_file(resume).string(), given, o.session); !s) return s.error();
  SessionOptions::Resume r{resume, run->sweep_id, {}};
  for (const auto& t : run->tests) r.finished[{t.id.impl, t.id.case_id, t.id.repeat}] = t;
  o.session.resume = std::move(r);
  if (o.log_dir.empty() && !o.no_log)
    o.log_dir = std::filesystem::is_directory(resume) ? std::filesystem::path(resume) : std::filesystem::path(resume).parent_path();
  return Ok{};
}
}  // namespace

Expected<CliOptions> parse_cli(int argc, char** argv) {
  CliOptions o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  const auto exe = self_executable(argv[0]);
  o.session.worker_binary = exe.string();

  CLI::App app{"BackendBench: correctness and performance of custom-op implementations loaded at run time"};
  // Every option shows its default in --help (=value), from the very variable it fills.
  app.option_defaults()->always_capture_default();
  app.footer(commands_help());
  app.set_version_flag("--version", version_line());
  // An option given twice takes its last value (a script's defaults, then the user's own); lists
  // are read as one text each for that reason, and split here.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  RawCli raw;
  add_selection_options(app, o, raw);
  add_run_options(app, o, raw);
  add_timing_options(app, o, raw);
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
  if (auto s = apply_lists(raw, o); !s) return s.error();
  if (auto s = apply_run(raw, app.count("--variants") > 0, o); !s) return s.error();
  // Absolute, so that results name it wherever they are read (and --resume finds it from anywhere).
  o.session.root = raw.root.empty() ? default_root(exe) : std::filesystem::absolute(raw.root).lexically_normal();
  if (!raw.resume.empty())
    if (auto s = apply_resume(raw.resume, app, o); !s) return s.error();
  return o;
}

}  // namespace bb
