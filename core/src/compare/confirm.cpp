#include "compare/confirm.hpp"

#include "plan/mode.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "devices/device_runtimes.hpp"
#include "plan/file_digest.hpp"
#include "plan/library_store.hpp"
#include "run_files.hpp"

namespace bb {

namespace {

namespace fs = std::filesystem;

// Runs `args` (args[0] a path) with stdout and stderr into `log`; its exit status, or -1.
int run_logged(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The kept copy of a run's library of `op` named `stem` (an implementation or the reference).
struct Found {
  fs::path copy;
  std::string why_not;
};
Found kept_copy(const RunRecord& run, const std::string& op, const std::string& impl) {
  const auto lib = library_of(run, op, impl);
  if (!lib) return {{}, fmt::format("its run lists no library for {}", impl)};
  if (lib->sha256.empty()) return {{}, fmt::format("its run recorded no sha256 of {}", lib->path)};
  const auto copy = kept_library(lib->sha256, fs::path(lib->path).filename().string());
  if (!copy) return {{}, fmt::format("no copy of {} (sha256 {}...) is kept in {}", lib->path, lib->sha256.substr(0, 12), library_store_root().string())};
  // The copy is the bytes that run timed, or it is not used: a plugin that could write to the
  // store must not make last night's library slower so that its own slowdown reads as noise.
  const auto now = sha256_file(*copy);
  if (!now || *now != lib->sha256)
    return {{}, fmt::format("the kept copy of {} is no longer the library that run timed (its sha256 changed)", lib->path)};
  return {*copy, ""};
}

// The options of NEW's run that decide how a test is timed, as flags.
constexpr double kConfirmBudget = 10;  // seconds of timing per side, at least, for a re-timing
constexpr double kHiddenBy = 2;        // how many times a run's noise may hide a slowdown (suspects, below)

std::vector<std::string> timing_flags(const RunRecord& next, double budget_scale) {
  std::vector<std::string> f;
  const auto& o = next.options;
  if (!o.is_object()) return f;
  if (o.value("timing_mode", "cold") == "hot") f.push_back("--hot");
  auto number = [&](const char* key, const char* flag, double scale = 1) {
    if (auto it = o.find(key); it != o.end() && it->is_number()) {
      f.push_back(flag);
      f.push_back(fmt::format("{:g}", it->get<double>() * scale));
    }
  };
  number("min_samples", "--min-samples");
  number("max_samples", "--max-samples");
  number("min_time_s", "--min-time");
  // The budget of each side: at least kConfirmBudget, whatever the night's (a quick sweep's 2 s
  // leaves a paired interval too wide to call a 25% slowdown on a busy machine); the pairing still
  // stops as soon as its interval is narrow enough.
  const double timeout = o.contains("timeout_s") && o["timeout_s"].is_number() ? o["timeout_s"].get<double>() : 0;
  f.push_back("--timeout");
  f.push_back(fmt::format("{:g}", budget_scale * std::max(timeout, kConfirmBudget)));
  number("warmup_time_s", "--warmup-time");
  number("max_noise", "--max-noise", 100);
  return f;
}

// The suspects, by implementation: one re-timing run each, over its slower cases, those
// INCONCLUSIVE that read slower (too noisy to call, or timed another way), and any other case
// both runs timed whose noise leaves room for a slowdown beyond the threshold, twice the larger
// noise below it (on the busy VM a planted 25% slowdown read +0.7% at ±28%, and -21.6% at ±27%:
// each run's own placement moves its median by about its noise, so two runs' medians differ by
// up to twice that): a real slowdown the night's noise hid is confirmed there, and stands as a
// regression.
using Suspects = std::map<std::pair<std::string, std::string>, std::vector<Change*>>;
Suspects find_suspects(RunComparison& c) {
  Suspects suspects;
  const auto noise = [](const std::optional<TestSummary>& t) {
    return t && t->timing && std::isfinite(t->timing->rel_stdev) ? t->timing->rel_stdev : 0.0;
  };
  for (auto& ch : c.changes) {
    const bool slower = ch.regression && ch.kind == ChangeKind::slower;
    const bool hidden = (ch.kind == ChangeKind::unchanged || ch.kind == ChangeKind::inconclusive || ch.kind == ChangeKind::faster) && ch.relative &&
                        *ch.relative > c.options.threshold_pct / 100.0 - kHiddenBy * std::max(noise(ch.base), noise(ch.next));
    const bool unsure = (ch.kind == ChangeKind::inconclusive && ch.relative && *ch.relative > 0) || hidden;
    if ((slower || unsure) && ch.next) suspects[{ch.op, ch.impl}].push_back(&ch);
  }
  return suspects;
}

// One implementation's re-timing: a root of its own (the op's manifest with the old library as
// the baseline and NEW's reference as the reference, its data, the three libraries).
struct Retiming {
  std::string op, impl, stem, devices;
  fs::path root;
};

Expected<Retiming> make_retiming(const RunRecord& base, const RunRecord& next, const std::string& op, const std::string& impl,
                                 const ConfirmOptions& options) {
  Retiming r{op, impl, impl.rfind(op + "__", 0) == 0 ? impl.substr(op.size() + 2) : impl, "", {}};
  const Found old_lib = kept_copy(base, op, impl), new_lib = kept_copy(next, op, impl);
  if (!old_lib.why_not.empty()) return make_error("BASE: " + old_lib.why_not);
  if (!new_lib.why_not.empty()) return make_error("NEW: " + new_lib.why_not);
  // The reference NEW used (it checks the re-timed calls), and the op's manifest from NEW's root.
  const auto op_report = std::find_if(next.ops.begin(), next.ops.end(), [&](const OpReport& x) { return x.op == op; });
  if (op_report == next.ops.end() || op_report->reference_kind == "identity") return make_error("NEW's reference of " + op + " is not a library");
  const Found reference = kept_copy(next, op, op_report->reference);
  if (!reference.why_not.empty()) return make_error("the reference: " + reference.why_not);
  const fs::path manifest = op_report->manifest;
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return make_error(fmt::format("the manifest {} is gone", manifest.string()));
  r.root = options.work / fmt::format("{}-{}", op, r.stem);
  const fs::path dir = r.root / op;
  fs::remove_all(r.root, ec);
  fs::create_directories(dir, ec);
  const std::string was = r.stem + "_base" + old_lib.copy.extension().string();
  const std::string ref_name = reference.copy.filename().string();
  YAML::Node m;
  try {
    m = YAML::LoadFile(manifest.string());
    m["baseline"] = fs::path(was).stem().string();
    m["reference"] = ref_name;
    m.remove("implementations");
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", manifest.string(), e.what()));
  }
  std::ofstream(dir / "gen_input.yaml") << YAML::Dump(m) << "\n";
  if (fs::is_directory(manifest.parent_path() / "data", ec)) fs::copy(manifest.parent_path() / "data", dir / "data", fs::copy_options::recursive, ec);
  fs::copy_file(old_lib.copy, dir / was, fs::copy_options::overwrite_existing, ec);
  fs::copy_file(new_lib.copy, dir / new_lib.copy.filename(), fs::copy_options::overwrite_existing, ec);
  if (reference.copy.filename() != new_lib.copy.filename()) fs::copy_file(reference.copy, dir / ref_name, fs::copy_options::overwrite_existing, ec);
  if (ec) return make_error(fmt::format("making {}: {}", r.root.string(), ec.message()));
  for (const auto& t : next.tests)
    if (t.id.op == op && t.id.impl == impl && !is_cpu(t.id.device) && !t.id.device.empty()) r.devices = std::to_string(t.id.device_index);
  return r;
}

// One re-timing run over `list` (case ids), each side's budget `scale` times the least.
Expected<RunRecord> retime(const Retiming& r, const RunRecord& next, const std::string& list, double scale, const std::string& logs,
                           const ConfirmOptions& options) {
  std::vector<std::string> args{options.binary, "--custom-ops-root", r.root.string(), "--ops", r.op, "--impls", r.stem, "--cases", list,
                                "--log-dir", (r.root / logs).string(), "-q"};
  if (!r.devices.empty()) args.insert(args.end(), {"--devices", r.devices});
  // The passes of the listed cases, whatever the manifest's default: a case id names its mode.
  bool fwd = false, bwd = false;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    (forward_case_id(list.substr(at, comma - at)) == list.substr(at, comma - at) ? fwd : bwd) = true;
    at = comma + 1;
  }
  args.insert(args.end(), {"--mode", fwd && bwd ? "fwd,bwd" : bwd ? "bwd" : "fwd"});
  for (const auto& f : timing_flags(next, scale)) args.push_back(f);
  for (const auto& f : options.extra) args.push_back(f);
  const int status = run_logged(args, r.root / "console.log");
  auto run = load_run(r.root / logs);
  if (!run) return make_error(fmt::format("the re-timing run (exit {}) left no results: {}", status, (r.root / "console.log").string()));
  return run;
}

// The re-timed test of a change, or why there is none.
const TestResult* retimed_test(const Retiming& rt, const RunRecord& r, const Change& ch, std::string* why) {
  const auto t = std::find_if(r.tests.begin(), r.tests.end(),
                              [&](const TestResult& x) { return x.id.impl == rt.op + "__" + rt.stem && x.id.case_id == ch.next->case_id; });
  if (t == r.tests.end() || t->outcome.verdict != Verdict::pass || !t->performance.speedup || !t->performance.speedup_low || !t->performance.speedup_high) {
    *why = fmt::format("not re-timed: the re-timing run gave {} ({})", t == r.tests.end() ? "no such test" : verdict_name(t->outcome.verdict),
                       t == r.tests.end() ? (rt.root / "console.log").string() : t->outcome.message);
    return nullptr;
  }
  return &*t;
}

// speedup: BASE's library's time over NEW's; below the threshold's `limit` with its whole
// interval below 1: NEW's code is slower, now, on this machine.
void judge_retimed(Change& ch, const TestResult& t, double limit) {
  const bool confirmed = *t.performance.speedup < limit && *t.performance.speedup_high < 1.0;
  const bool was_unsure = ch.kind != ChangeKind::slower;
  ch.confirmation = fmt::format("re-timed now, paired: NEW's library takes {:.2f}x BASE's time [{:.2f}, {:.2f}]: {}", 1.0 / *t.performance.speedup,
                                1.0 / *t.performance.speedup_high, 1.0 / *t.performance.speedup_low,
                                confirmed    ? (was_unsure ? "confirmed: a regression the run's noise had hidden" : "confirmed")
                                : was_unsure ? "not confirmed, so still not a regression"
                                             : "not confirmed, so not a regression (the slowdown was the run's, not the code's)");
  if (confirmed && was_unsure) {
    ch.kind = ChangeKind::slower;
    ch.regression = true;
  }
  if (!confirmed) ch.regression = false;
}

// One implementation's suspects re-timed and judged.
void confirm_implementation(const Retiming& rt, const std::vector<Change*>& changes, const RunRecord& next, double limit,
                            const ConfirmOptions& options) {
  std::string cases;
  for (const auto* ch : changes) cases += (cases.empty() ? "" : ",") + ch->next->case_id;
  auto run = retime(rt, next, cases, 1, "logs", options);
  if (!run) {
    for (auto* ch : changes) ch->confirmation = "not re-timed: " + run.error().message;
    return;
  }
  // Undecided (the ratio beyond the threshold, its interval reaching 1: too few pairs on a busy
  // machine) is timed once more, with twice the budget, and that answer taken.
  auto undecided_by = [&](const TestResult* t) { return t && *t->performance.speedup < limit && *t->performance.speedup_high >= 1.0; };
  std::string undecided;
  for (const auto* ch : changes) {
    std::string why;
    if (undecided_by(retimed_test(rt, *run, *ch, &why))) undecided += (undecided.empty() ? "" : ",") + ch->next->case_id;
  }
  Expected<RunRecord> again = make_error("");
  if (!undecided.empty()) again = retime(rt, next, undecided, 2, "logs_again", options);
  for (auto* ch : changes) {
    std::string why;
    const TestResult* t = retimed_test(rt, *run, *ch, &why);
    if (again && undecided_by(t))
      if (const TestResult* u = retimed_test(rt, *again, *ch, &why)) t = u;
    if (t) judge_retimed(*ch, *t, limit);
    else ch->confirmation = why;
  }
}

}  // namespace

int confirm_regressions(RunComparison& c, const RunRecord& base, const RunRecord& next, const ConfirmOptions& options) {
  const double limit = 1.0 / (1.0 + c.options.threshold_pct / 100.0);  // NEW's speed relative to BASE's, at the threshold
  int retimed = 0;
  for (auto& [key, changes] : find_suspects(c)) {
    auto rt = make_retiming(base, next, key.first, key.second, options);
    if (!rt) {
      for (auto* ch : changes) ch->confirmation = "not re-timed: " + rt.error().message;
      continue;
    }
    confirm_implementation(*rt, changes, next, limit, options);
    ++retimed;
  }
  // Regressions first again.
  std::stable_sort(c.changes.begin(), c.changes.end(), [](const Change& a, const Change& b) { return a.regression && !b.regression; });
  return retimed;
}

}  // namespace bb
