// What the host asks of a worker process and what comes back, one JSON line each way, with a
// sealed memfd (sealed_blob.hpp) beside a message where tensors travel. Every command is a row of
// one enum (`WorkerCommand`) with a request struct here; the worker and the unit tests' fake worker
// serve them through one dispatch table (worker_dispatch.hpp).
//
// A worker serves prepared calls: one bound call (a function, a case, a device) each, named by
// its role in the test (impl, reference, baseline), prepared once
// and then called or timed any number of times.
//   prepare  PrepareRequest + the case's inputs (blob)          ->  CallReply
//   call     CallRequest [+ other inputs (blob)]                 ->  CallReply + its buffers (blob) where return_buffers
//   block    BlockRequest                                        ->  CallReply, measurement, tampered? + buffers after the last call (blob)
//   pace     PaceRequest + a pacing socket                       ->  CallReply: every timed sample on the host's fresh inputs (fresh_inputs_protocol.hpp)
//   buffers  BuffersRequest                                      ->  CallReply + the prepared call's buffers as they are (blob)
//   export   ExportRequest                                       ->  ExportReply + mirror k as shareable memory (device_check.hpp)
//   end      EndRequest                                          ->  {}
//   audit    AuditRequest                                        ->  AuditReply: the worker's own code as loaded (worker_integrity.hpp)
// Before anything is prepared: probe (ProbeReply), probe_many and read_many (SurveyReply: Python files in
// one interpreter), generate (a BackendBench-py folder's tests: CallReply), devices (the kind's
// description: device_probe.hpp), warm (a spare worker's context: CallReply). A checker worker's
// (device_check.hpp): watch, watch_mirror, watch_reference, stage, keep_case, expect,
// keep_sample, unwatch (CheckReply), verify and verify_kept (VerifyReply), kept_home (CheckReply
// + the kept sample's buffers). Any reply may carry "fatal": the worker must be replaced.
// A worker never judges a call: its buffers go back to the host, which compares them with the
// reference's, computed in another worker (judge.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <backendbench/device_runtime.h>

#include "measure/measurement.hpp"
#include "plan/cases.hpp"
#include "plugin_library.hpp"
#include "results.hpp"

namespace bb {

// Every command of the protocol, one row each (worker_protocol.cpp names them on the wire;
// worker_dispatch.cpp serves them).
enum class WorkerCommand : std::uint8_t {
  // before anything is prepared
  probe, probe_many, read_many, generate, devices, warm,
  // a prepared call's
  prepare, call, block, pace, buffers, export_mirror, end, audit,
  // a checker's (device_check.hpp)
  watch, watch_mirror, watch_reference, stage, keep_case, expect, verify, keep_sample, verify_kept, kept_home, unwatch,
};
inline constexpr std::size_t kCommandCount = static_cast<std::size_t>(WorkerCommand::unwatch) + 1;
// Its name on the wire ("export" for export_mirror).
const char* command_name(WorkerCommand c);
std::optional<WorkerCommand> command_named(std::string_view name);
// A request's command (its "cmd"); nullopt where it names none.
std::optional<WorkerCommand> command_of(const nlohmann::json& request);

// A request as it goes on the wire: its fields and its "cmd".
template <class Request>
nlohmann::json request_json(const Request& r) {
  nlohmann::json j = r;
  j["cmd"] = command_name(Request::kCommand);
  return j;
}
// A request read back (a missing field keeps its default; a field of another type throws
// nlohmann::json::exception, which the dispatch answers as an error).
template <class Request>
Request read_request(const nlohmann::json& j) {
  return j.get<Request>();
}

// Requests with no fields.
#define BB_EMPTY_REQUEST(Type, command)                                                   \
  struct Type {                                                                           \
    static constexpr WorkerCommand kCommand = WorkerCommand::command;                                 \
  };                                                                                      \
  inline void to_json(nlohmann::json& j, const Type&) { j = nlohmann::json::object(); } \
  inline void from_json(const nlohmann::json&, Type&) {}

// Which function a prepared call calls: <op>_kernel_impl or <op>_reference, or, for the
// backward pass, <op>_backward_impl or <op>_backward_reference; `differences`: the backward by
// finite differences of the target's forward (worker/finite_differences.hpp), for a reference
// that has no backward.
struct Target {
  enum class Kind { kernel_impl, reference, identity };
  // pair: the forward, then the backward on the same inputs (worker/pass_pair.hpp); its backward
  // by differences where the reference has none (pair_differences).
  enum class Pass { forward, backward, differences, pair, pair_differences };
  Kind kind = Kind::identity;
  std::string library;  // empty for identity
  Pass pass = Pass::forward;
  bool operator==(const Target&) const = default;
};
nlohmann::json to_json(const Target& t);
Target target_from_json(const nlohmann::json& j);
// The pass a test of `mode` calls of an implementation (a reference with no backward: see
// ReferenceChoice::target, plan.hpp).
inline Target::Pass pass_of(Mode mode) {
  return mode == Mode::bwd ? Target::Pass::backward : mode == Mode::fwd_bwd ? Target::Pass::pair : Target::Pass::forward;
}

// Where each tensor lies in a blob: 4 KiB-aligned regions, in order.
struct BlobLayout {
  std::vector<std::size_t> offsets, sizes;
  std::size_t total = 0;
  void add(std::size_t bytes);
};
// The case's inputs, their data only (host -> worker).
BlobLayout inputs_layout(const ConcreteCase& c);
// A call's buffers, each whole with its guard bytes (worker -> host): the inputs, then every
// output (an in-place output has an empty region: its data is its input's).
BlobLayout buffers_layout(const ConcreteCase& c);

// An input made on its device (backendbench/detail/init_values.h): every element by `fill`, or,
// where `scatter` > 0, the case's values with `scatter` elements drawn by fill.seed changed to
// theirs (a checked call's sparse change).
struct InputRecipe {
  bb_fill_spec fill{};
  uint64_t scatter = 0;
  bool fresh = false;  // made as a timed sample's fresh inputs are (the runtime's fill_fresh: other bits, the device's)
};
nlohmann::json to_json(const std::vector<InputRecipe>& r);
std::vector<InputRecipe> input_recipes_from_json(const nlohmann::json& j);
// Input t made whole on the device from `seed` (what fill_tensor(t, .., seed) makes on the
// host, bit for bit); nullopt where the device has no generator for its initialiser (.npy) or
// its bounds are not finite (JSON has no inf or NaN).
std::optional<InputRecipe> input_recipe(const ConcreteTensor& t, uint64_t seed);
// The seed of input `name` in a timed sample on fresh inputs made from `sample_seed` (the
// host's and the worker's: fresh_inputs_protocol.hpp).
uint64_t fresh_input_seed(uint64_t sample_seed, const std::string& name);

struct PrepareRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::prepare;
  std::string role;
  std::string op;
  ConcreteCase test_case;  // the host's, as it expanded it (case_json.hpp): the worker reads no manifest
  Target target;
  std::string device = "cpu";
  int device_index = 0;
  bool shareable = false;  // the call's device buffers in memory the checker can map (device_check.hpp)
  // The case's inputs made on the device (one recipe per input) rather than sent in a blob: a
  // device case whose buffers the checker compares there (judge.cpp).
  std::optional<std::vector<InputRecipe>> generate;
};
void to_json(nlohmann::json& j, const PrepareRequest& r);
void from_json(const nlohmann::json& j, PrepareRequest& r);

// One call of a prepared call. Its inputs are the case's, or those of the blob that comes with it, or,
// with `generate`, made on the device (one recipe per input: a reference's checked call, whose
// worker holds no plugin under test), or, `staged`, as the checker left them in the device
// buffers (the implementation's side of that checked call: only its outputs are poisoned).
struct CallRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::call;
  std::string role;
  bool witnessed = true;
  bool return_buffers = true;
  bool staged = false;
  std::optional<std::vector<InputRecipe>> generate;
};
void to_json(nlohmann::json& j, const CallRequest& r);
void from_json(const nlohmann::json& j, CallRequest& r);

// What a call did, besides its buffers.
struct CallReply {
  std::string error;            // the call failed: returned an error, a device error, ...
  bool sticky = false;          // a sticky device error: the worker is done
  bool outside = false;         // it wrote the outputs outside its stream
  std::string left_behind;      // what it left in the process (call_guard.hpp); the worker is retired
  std::string changed_after_return;  // a thread it left kept writing the outputs
  bool skipped = false;         // prepare: the device is missing (error says why)
  bool unsupported = false;     // call: it returned BB_ERR_UNSUPPORTED (error holds its message)
  nlohmann::json to_json() const;
  static CallReply from_json(const nlohmann::json& j);
};
// What `outside` means, as a verdict's message says it.
extern const char* const kOutsideStream;

nlohmann::json to_json(const TimingOptions& o);
TimingOptions timing_options_from_json(const nlohmann::json& j);
// A measurement's samples and bookkeeping; the receiver recomputes the statistics.
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);

// probe: load a library and read its symbols and info record (plan.cpp asks, the worker answers).
struct ProbeRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::probe;
  std::string library;
  std::string op;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeRequest, library, op)

struct ProbeReply {
  bool loaded = false;
  bool unavailable = false;  // not loaded because this machine cannot run it (kPythonUnavailable): SKIPPED, not an error
  std::string error;
  bool has_kernel_impl = false;
  bool has_reference = false;
  bool has_backward_impl = false;       // <op>_backward_impl
  bool has_backward_reference = false;  // <op>_backward_reference
  PluginInfo info;
  bool imports_packages = false;  // a .py file that imports an installed package (PythonSurvey)
};

nlohmann::json to_json(const ProbeReply& r);
ProbeReply probe_reply_from_json(const nlohmann::json& j);

// probe_many: Python files surveyed in one interpreter, PyTorch imported once, a child
// importing each; read_many: their text read, nothing run. `ops`: one per file (plan.cpp).
struct ProbeManyRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::probe_many;
  std::vector<std::string> libraries, ops;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeManyRequest, libraries, ops)
struct ReadManyRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::read_many;
  std::vector<std::string> libraries, ops;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ReadManyRequest, libraries, ops)
// A probe per file, in order; read_many's is empty (null on the wire) where the file must be
// imported to say.
struct SurveyReply {
  std::vector<std::optional<ProbeReply>> probes;
};
nlohmann::json to_json(const SurveyReply& r);
SurveyReply survey_reply_from_json(const nlohmann::json& j);

// A BackendBench-py folder's tests, written by its gen_input.py to `out` (generated_manifest.hpp).
struct GenerateRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::generate;
  std::string gen_input;
  std::vector<std::string> candidates;
  std::string op;
  uint64_t seed = 0;
  std::string out;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GenerateRequest, gen_input, candidates, op, seed, out)

// A device kind as this worker sees it (device_probe.hpp); its peaks measured where asked, unless known.
struct DevicesRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::devices;
  std::string kind;
  bool measure_peak = false;
  nlohmann::json known_peaks = nlohmann::json::object();
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DevicesRequest, kind, measure_peak, known_peaks)

// A spare worker's context, made before its first test (spare_worker.hpp); `python`: its
// interpreter started too.
struct WarmRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::warm;
  std::string device = "cpu";
  int device_index = 0;
  bool python = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WarmRequest, device, device_index, python)

// A measurement of the prepared call; its buffers after the last call come back unless the
// checker compares them on the device.
struct BlockRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::block;
  std::string role;
  TimingOptions timing;
  bool return_buffers = true;
};
void to_json(nlohmann::json& j, const BlockRequest& r);
void from_json(const nlohmann::json& j, BlockRequest& r);

// Fresh inputs for every timed sample from now on (fresh_inputs_protocol.hpp): a pacing socket comes with it.
struct PaceRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::pace;
  std::string role;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PaceRequest, role)
// The prepared call's buffers as they are now (after a block the checker found wrong: the host judges).
struct BuffersRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::buffers;
  std::string role;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BuffersRequest, role)
// Mirror `mirror` of the prepared call as shareable memory for the checker.
struct ExportRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::export_mirror;
  std::string role;
  int mirror = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExportRequest, role, mirror)
struct ExportReply {
  std::string error;
  std::size_t bytes = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExportReply, error, bytes)
struct EndRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::end;
  std::string role;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EndRequest, role)

// The whole check of the worker's own code and GOT, asked for after a test's timing.
BB_EMPTY_REQUEST(AuditRequest, audit)
struct AuditReply {
  bool watched = false;
  std::string tampered;  // what changed; the worker is retired
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AuditReply, watched, tampered)

// The checker's (device_check.hpp). `checks`: device_check_items' JSON; the blob with it: the
// reference's buffers, unless the case lives on the device.
struct WatchRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::watch;
  std::string device = "cpu";
  int device_index = 0;
  nlohmann::json checks = nlohmann::json::array();
  std::size_t expected_bytes = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WatchRequest, device, device_index, checks, expected_bytes)
// The implementation's mirror k (its memory comes with it).
struct WatchMirrorRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::watch_mirror;
  int mirror = -1;
  std::size_t bytes = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WatchMirrorRequest, mirror, bytes)
// The reference's mirror k, which is `size` bytes at `offset` of the buffers' layout.
struct WatchReferenceRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::watch_reference;
  int mirror = -1;
  std::size_t bytes = 0, offset = 0, size = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WatchReferenceRequest, mirror, bytes, offset, size)
// The reference's first `inputs` mirrors copied into the implementation's (a checked call's inputs).
struct StageRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::stage;
  int inputs = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StageRequest, inputs)
BB_EMPTY_REQUEST(KeepCaseRequest, keep_case)
// Compare with the blob that comes with it from now on (none: the case's again).
BB_EMPTY_REQUEST(ExpectRequest, expect)
struct VerifyRequest {
  static constexpr WorkerCommand kCommand = WorkerCommand::verify;
  bool figures = false;  // with the outputs' error figures
  bool kept = false;     // against the kept sample's buffers
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerifyRequest, figures, kept)
BB_EMPTY_REQUEST(KeepSampleRequest, keep_sample)
// The kept sample against the reference's buffers as its call left them, then the case's again.
BB_EMPTY_REQUEST(VerifyKeptRequest, verify_kept)
// The kept sample's buffers, home (a blob with the reply).
BB_EMPTY_REQUEST(KeptHomeRequest, kept_home)
BB_EMPTY_REQUEST(UnwatchRequest, unwatch)
#undef BB_EMPTY_REQUEST

struct CheckReply {
  std::string error;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CheckReply, error)
struct VerifyReply {
  std::string error;  // the checker could not say
  bool ok = false;
  std::string why;    // where not ok: what differs
  std::optional<bool> zeros_pass;
  std::optional<ErrorFigures> errors;  // with `figures`
};
nlohmann::json to_json(const VerifyReply& r);
VerifyReply verify_reply_from_json(const nlohmann::json& j);

}  // namespace bb
