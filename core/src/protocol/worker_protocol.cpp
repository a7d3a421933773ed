#include "protocol/worker_protocol.hpp"

#include <cmath>
#include <iterator>

#include "dtype.hpp"
#include "host_buffer.hpp"
#include "init.hpp"
#include "protocol/case_json.hpp"

namespace bb {

namespace {
// The wire's names, in WorkerCommand's order.
constexpr const char* kCommandNames[] = {
    "probe", "probe_many", "read_many", "generate", "devices", "warm",
    "prepare", "call", "block", "pace", "buffers", "export", "end", "audit",
    "watch", "watch_mirror", "watch_reference", "stage", "keep_case", "expect", "verify", "keep_sample", "verify_kept", "kept_home", "unwatch",
};
static_assert(std::size(kCommandNames) == kCommandCount, "a name for every command");

const char* target_kind_name(Target::Kind k) {
  switch (k) {
    case Target::Kind::kernel_impl: return "kernel_impl";
    case Target::Kind::reference: return "reference";
    case Target::Kind::identity: return "identity";
  }
  return "identity";
}
Target::Kind target_kind(const std::string& s) {
  if (s == "kernel_impl") return Target::Kind::kernel_impl;
  if (s == "reference") return Target::Kind::reference;
  return Target::Kind::identity;
}
StopReason stop_reason_from(const std::string& s) {
  for (StopReason r : {StopReason::converged, StopReason::noise_plateau, StopReason::max_samples, StopReason::timeout})
    if (s == stop_reason_name(r)) return r;
  return StopReason::running;
}
}  // namespace

const char* const kOutsideStream =
    "the call's work ran outside the stream it was given (on the legacy default stream or a stream of its own): it wrote the "
    "outputs while the given stream was held, so events on that stream would time it as free";

const char* command_name(WorkerCommand c) { return kCommandNames[static_cast<std::size_t>(c)]; }

std::optional<WorkerCommand> command_named(std::string_view name) {
  for (std::size_t i = 0; i < kCommandCount; ++i)
    if (name == kCommandNames[i]) return static_cast<WorkerCommand>(i);
  return std::nullopt;
}

std::optional<WorkerCommand> command_of(const nlohmann::json& request) {
  if (!request.is_object()) return std::nullopt;
  const auto it = request.find("cmd");
  if (it == request.end() || !it->is_string()) return std::nullopt;
  return command_named(it->get_ref<const std::string&>());
}

namespace {
constexpr std::pair<Target::Pass, const char*> kPasses[] = {
    {Target::Pass::forward, "forward"}, {Target::Pass::backward, "backward"}, {Target::Pass::differences, "differences"},
    {Target::Pass::pair, "pair"},       {Target::Pass::pair_differences, "pair_differences"}};
}  // namespace

nlohmann::json to_json(const Target& t) {
  const char* pass = "forward";
  for (const auto& [p, name] : kPasses)
    if (p == t.pass) pass = name;
  return {{"kind", target_kind_name(t.kind)}, {"library", t.library}, {"pass", pass}};
}
Target target_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return {};
  Target::Pass pass = Target::Pass::forward;
  for (const auto& [p, name] : kPasses)
    if (j.value("pass", "forward") == name) pass = p;
  return Target{target_kind(j.value("kind", "identity")), j.value("library", ""), pass};
}

void BlobLayout::add(std::size_t bytes) {
  offsets.push_back(total);
  sizes.push_back(bytes);
  total += (bytes + 4095) / 4096 * 4096;
}

BlobLayout inputs_layout(const ConcreteCase& c) {
  BlobLayout l;
  for (const auto& t : c.inputs) l.add(t.nbytes());
  return l;
}

BlobLayout buffers_layout(const ConcreteCase& c) {
  BlobLayout l;
  auto raw = [](std::size_t n) { return HostBuffer::kGuardBytes + n + HostBuffer::kGuardBytes; };
  for (const auto& t : c.inputs) l.add(raw(t.nbytes()));
  for (const auto& o : c.outputs) l.add(o.inplace_input >= 0 ? 0 : raw(o.nbytes()));
  return l;
}

void to_json(nlohmann::json& j, const PrepareRequest& r) {
  j = {{"role", r.role}, {"op", r.op}, {"case", to_json(r.test_case)}, {"target", to_json(r.target)}, {"device", r.device},
       {"device_index", r.device_index}, {"shareable", r.shareable}, {"generate", r.generate ? to_json(*r.generate) : nlohmann::json()}};
}

void from_json(const nlohmann::json& j, PrepareRequest& r) {
  r = PrepareRequest{};
  r.role = j.value("role", "");
  r.op = j.value("op", "");
  r.test_case = case_from_json(j.at("case"));
  r.target = target_from_json(j.value("target", nlohmann::json::object()));
  r.device = j.value("device", "cpu");
  r.device_index = j.value("device_index", 0);
  r.shareable = j.value("shareable", false);
  if (auto it = j.find("generate"); it != j.end() && it->is_array()) r.generate = input_recipes_from_json(*it);
}

nlohmann::json to_json(const std::vector<InputRecipe>& r) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& g : r)
    j.push_back({{"kind", g.fill.kind}, {"a", g.fill.a}, {"b", g.fill.b}, {"seed", g.fill.seed}, {"code", g.fill.code}, {"bits", g.fill.bits},
                 {"twist", g.fill.twist}, {"twist_log2", g.fill.twist_log2},
                 {"scatter", g.scatter}, {"fresh", g.fresh}});
  return j;
}

std::vector<InputRecipe> input_recipes_from_json(const nlohmann::json& j) {
  std::vector<InputRecipe> r;
  if (!j.is_array()) return r;
  for (const auto& g : j) {
    InputRecipe in;
    in.fill.struct_size = sizeof(bb_fill_spec);
    in.fill.kind = g.value("kind", uint32_t{0});
    in.fill.a = g.value("a", 0.0);
    in.fill.b = g.value("b", 0.0);
    in.fill.seed = g.value("seed", uint64_t{0});
    in.fill.code = g.value("code", uint8_t{0});
    in.fill.bits = g.value("bits", uint8_t{0});
    in.fill.twist = g.value("twist", uint32_t{0});
    in.fill.twist_log2 = g.value("twist_log2", int32_t{0});
    in.scatter = g.value("scatter", uint64_t{0});
    in.fresh = g.value("fresh", false);
    r.push_back(in);
  }
  return r;
}

std::optional<InputRecipe> input_recipe(const ConcreteTensor& t, uint64_t seed) {
  const auto kind = device_init_kind(t.init.kind);
  if (!kind || !std::isfinite(t.init.a) || !std::isfinite(t.init.b)) return std::nullopt;
  const DLDataType d = to_dlpack(t.dtype);
  InputRecipe in;
  in.fill = {sizeof(bb_fill_spec), *kind, t.init.a, t.init.b, seed, d.code, d.bits, t.init.twist, t.init.twist_log2};
  return in;
}

uint64_t fresh_input_seed(uint64_t sample_seed, const std::string& name) { return mix_seed(sample_seed, "fresh:" + name); }

void to_json(nlohmann::json& j, const CallRequest& r) {
  j = {{"role", r.role}, {"witnessed", r.witnessed}, {"return_buffers", r.return_buffers}, {"staged", r.staged}};
  if (r.generate) j["generate"] = to_json(*r.generate);
}

void from_json(const nlohmann::json& j, CallRequest& r) {
  r = CallRequest{};
  r.role = j.value("role", "");
  r.witnessed = j.value("witnessed", true);
  r.return_buffers = j.value("return_buffers", true);
  r.staged = j.value("staged", false);
  if (auto it = j.find("generate"); it != j.end() && it->is_array()) r.generate = input_recipes_from_json(*it);
}

void to_json(nlohmann::json& j, const BlockRequest& r) {
  j = {{"role", r.role}, {"timing", to_json(r.timing)}, {"return_buffers", r.return_buffers}};
}

void from_json(const nlohmann::json& j, BlockRequest& r) {
  r = BlockRequest{};
  r.role = j.value("role", "");
  r.timing = timing_options_from_json(j.value("timing", nlohmann::json::object()));
  r.return_buffers = j.value("return_buffers", true);
}

// Each member under its own name. Read, a missing key keeps the member's default and a key of
// another type throws, as value() does. Defined here, not in the header, so that
// CallReply::from_json, which answers a reply that is not an object with an error, is the only
// way in.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CallReply, error, sticky, outside, left_behind, changed_after_return, skipped, unsupported)

nlohmann::json CallReply::to_json() const { return nlohmann::json(*this); }

CallReply CallReply::from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    CallReply r;
    r.error = "the worker's reply is not an object";
    return r;
  }
  return j.get<CallReply>();
}

nlohmann::json to_json(const TimingOptions& o) {
  const auto& s = o.rule;
  return {{"min_samples", s.min_samples}, {"max_samples", s.max_samples}, {"min_time", s.min_time},
          {"max_noise", s.max_noise}, {"timeout", s.timeout}, {"warmup_time", o.warmup_time},
          {"min_sample_time", o.min_sample_time}, {"mode", timing_mode_name(o.mode)},
          {"blocking_kernel", o.blocking_kernel}, {"l2_discard", o.l2_discard},
          {"throttle_threshold", o.throttle_threshold}, {"throttle_recovery_delay", o.throttle_recovery_delay},
          {"device_warm", o.device_warm}};
}

TimingOptions timing_options_from_json(const nlohmann::json& t) {
  TimingOptions o;
  if (!t.is_object()) return o;
  auto& s = o.rule;
  s.min_samples = t.value("min_samples", s.min_samples);
  s.max_samples = t.value("max_samples", s.max_samples);
  s.min_time = t.value("min_time", s.min_time);
  s.max_noise = t.value("max_noise", s.max_noise);
  s.timeout = t.value("timeout", s.timeout);
  o.warmup_time = t.value("warmup_time", o.warmup_time);
  o.min_sample_time = t.value("min_sample_time", o.min_sample_time);
  o.mode = t.value("mode", std::string("cold")) == "hot" ? TimingMode::hot : TimingMode::cold;
  o.blocking_kernel = t.value("blocking_kernel", o.blocking_kernel);
  o.l2_discard = t.value("l2_discard", o.l2_discard);
  o.throttle_threshold = t.value("throttle_threshold", o.throttle_threshold);
  o.throttle_recovery_delay = t.value("throttle_recovery_delay", o.throttle_recovery_delay);
  o.device_warm = t.value("device_warm", o.device_warm);
  return o;
}

nlohmann::json to_json(const Measurement& m) {
  return {{"mode", timing_mode_name(m.mode)}, {"stop", stop_reason_name(m.stop)}, {"batch", m.batch},
          {"warmup_calls", m.warmup_calls}, {"wall_time", m.wall_time}, {"measured_time", m.measured_time},
          {"throttled", m.throttled}, {"clock_mhz", m.clock_mhz}, {"min_clock_mhz", m.min_clock_mhz},
          {"blocking", m.blocking}, {"eviction", m.eviction}, {"samples_per_sync", m.samples_per_sync},
          {"event_cost", m.event_cost}, {"paced", m.paced}, {"fresh_seconds", m.fresh_seconds}, {"notes", m.notes}, {"samples", m.samples}, {"host_samples", m.host_samples}};
}

Measurement measurement_from_json(const nlohmann::json& j) {
  Measurement m;
  if (!j.is_object()) return m;
  m.mode = j.value("mode", std::string("cold")) == "hot" ? TimingMode::hot : TimingMode::cold;
  m.stop = stop_reason_from(j.value("stop", ""));
  m.batch = std::max<std::size_t>(1, j.value("batch", std::size_t{1}));
  m.warmup_calls = j.value("warmup_calls", std::size_t{0});
  m.wall_time = j.value("wall_time", 0.0);
  m.throttled = j.value("throttled", std::size_t{0});
  m.clock_mhz = j.value("clock_mhz", 0.0);
  m.min_clock_mhz = j.value("min_clock_mhz", 0.0);
  m.blocking = j.value("blocking", false);
  m.eviction = j.value("eviction", "");
  m.samples_per_sync = j.value("samples_per_sync", std::size_t{1});
  m.event_cost = j.value("event_cost", 0.0);
  m.paced = j.value("paced", std::size_t{0});
  m.fresh_seconds = j.value("fresh_seconds", 0.0);
  m.notes = j.value("notes", std::vector<std::string>{});
  m.samples = j.value("samples", std::vector<double>{});
  m.host_samples = j.value("host_samples", std::vector<double>{});
  // Statistics are recomputed here from the samples, never taken from the sender.
  m.measured_time = 0;
  for (double s : m.samples) m.measured_time += s * static_cast<double>(m.batch);
  m.stats = summarize(m.samples);
  m.host = summarize(m.host_samples);
  return m;
}


nlohmann::json to_json(const ProbeReply& r) {
  return {{"loaded", r.loaded},
          {"unavailable", r.unavailable},
          {"error", r.error},
          {"has_kernel_impl", r.has_kernel_impl},
          {"has_reference", r.has_reference},
          {"has_backward_impl", r.has_backward_impl},
          {"has_backward_reference", r.has_backward_reference},
          {"imports_packages", r.imports_packages},
          {"info",
           {{"present", r.info.present}, {"abi_version", r.info.abi_version}, {"version", r.info.version},
            {"devices", r.info.devices}, {"dtypes", r.info.dtypes}, {"preconditions", r.info.preconditions}}}};
}

ProbeReply probe_reply_from_json(const nlohmann::json& j) {
  ProbeReply r;
  r.loaded = j.value("loaded", false);
  r.unavailable = j.value("unavailable", false);
  r.error = j.value("error", "");
  r.has_kernel_impl = j.value("has_kernel_impl", false);
  r.has_reference = j.value("has_reference", false);
  r.has_backward_impl = j.value("has_backward_impl", false);
  r.has_backward_reference = j.value("has_backward_reference", false);
  r.imports_packages = j.value("imports_packages", false);
  const auto info = j.value("info", nlohmann::json::object());
  r.info.present = info.value("present", false);
  r.info.abi_version = info.value("abi_version", uint32_t{BB_ABI_VERSION});
  r.info.version = info.value("version", "");
  r.info.devices = info.value("devices", std::vector<std::string>{});
  r.info.dtypes = info.value("dtypes", std::vector<std::string>{});
  r.info.preconditions = info.value("preconditions", std::vector<std::string>{});
  return r;
}

nlohmann::json to_json(const SurveyReply& r) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.probes) probes.push_back(p ? to_json(*p) : nlohmann::json());
  return {{"probes", probes}};
}

SurveyReply survey_reply_from_json(const nlohmann::json& j) {
  SurveyReply r;
  if (!j.is_object()) return r;
  for (const auto& p : j.value("probes", nlohmann::json::array()))
    r.probes.push_back(p.is_object() ? std::optional<ProbeReply>(probe_reply_from_json(p)) : std::nullopt);
  return r;
}

nlohmann::json to_json(const VerifyReply& r) {
  nlohmann::json j = {{"error", r.error}, {"ok", r.ok}, {"why", r.why}};
  if (r.zeros_pass) j["zeros_pass"] = *r.zeros_pass;
  if (r.errors) j["errors"] = *r.errors;
  return j;
}

VerifyReply verify_reply_from_json(const nlohmann::json& j) {
  VerifyReply r;
  if (!j.is_object()) {
    r.error = "the checker's reply is not an object";
    return r;
  }
  r.error = j.value("error", "");
  r.ok = j.value("ok", false);
  r.why = j.value("why", "");
  if (auto it = j.find("zeros_pass"); it != j.end() && it->is_boolean()) r.zeros_pass = it->get<bool>();
  if (auto it = j.find("errors"); it != j.end() && it->is_object()) r.errors = it->get<ErrorFigures>();
  return r;
}

}  // namespace bb
