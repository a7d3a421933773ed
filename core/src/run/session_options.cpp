#include "run/session_options.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "measure/cpu_pin.hpp"
#include "plan/value_variants.hpp"

namespace bb {

int cpu_worker_count(const SessionOptions& o) {
  if (o.cpu_workers > 0) return o.cpu_workers;
  if (o.performance) {
    // Timed CPU tests side by side, each pairing on a physical core of its own (cpu_pin.hpp): a
    // quarter of the cores, at most 8; the rest are for the device workers' host threads, the
    // untimed work beside them and the host. Below 8 cores, one.
    const int cores = usable_physical_cores();
    return cores < 8 ? 1 : std::min(8, cores / 4);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : static_cast<int>(std::thread::hardware_concurrency());
  if (cpus < 8) return 1;
  return std::min(32, cpus / 2);
}

static nlohmann::json modes_json(const std::optional<std::vector<Mode>>& modes) {
  if (!modes) return nullptr;
  std::string text;
  for (Mode m : *modes) text += fmt::format("{}{}", text.empty() ? "" : ",", mode_name(m));
  return text;
}

nlohmann::json session_options_json(const SessionOptions& o) {
  const auto& r = o.timing.rule;
  return {{"root", o.root.string()},
          {"ops", o.ops},
          {"impls", o.impls},
          {"cases", o.cases},
          {"input_ids", o.input_ids},
          {"isolate", o.isolate},
          {"test_timeout_s", o.test_timeout},
          {"performance", o.performance},
          {"check_determinism", o.check_determinism},
          {"seed", o.seed ? nlohmann::json(*o.seed) : nlohmann::json()},
          {"random_cases", o.expansion.random_cases},
          {"variants", variant_set_text(o.expansion.variants)},
          {"modes", modes_json(o.modes)},
          {"check_backwards", o.check_backwards},
          {"min_samples", r.min_samples},
          {"max_samples", r.max_samples},
          {"min_time_s", r.min_time},
          {"max_noise", r.max_noise},
          {"timeout_s", r.timeout},
          {"warmup_time_s", o.timing.warmup_time},
          {"timing_mode", timing_mode_name(o.timing.mode)},
          {"blocking_kernel", o.timing.blocking_kernel},
          {"l2_discard", o.timing.l2_discard},
          {"throttle_threshold", o.timing.throttle_threshold},
          {"throttle_recovery_delay_s", o.timing.throttle_recovery_delay},
          {"perf_p", o.perf_p},
          {"score_rule", score_rule_name(o.score_rule)},
          {"devices", o.all_devices ? nlohmann::json("all") : nlohmann::json(o.device_ordinals)},
          {"jobs", cpu_worker_count(o)},
          {"shard", fmt::format("{}/{}", o.shard_index + 1, o.shard_count)},
          {"repeats", o.repeats},
          {"run_id", o.run_id}};
}

}  // namespace bb
