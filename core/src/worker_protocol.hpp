// What the host asks of a worker process and what comes back, one JSON line each way, with a
// sealed memfd (sealed_blob.hpp) beside a message where tensors travel.
//
// A worker serves sessions: one bound call (a function, a case, a device) each, prepared once
// and then called or timed any number of times.
//   prepare {session, target, case, device} + the case's inputs (blob)  ->  {} or {error}
//   call    {session, witnessed, return_buffers?, generate?|staged?}
//                                    [+ other inputs (blob)]            ->  {...} + its buffers (blob) where return_buffers
//   block   {session, timing}                                           ->  {measurement, tampered?} + buffers after the last call (blob)
//   pace    {session} + a pacing socket                                 ->  {}: every timed CPU sample on the host's fresh inputs (fresh_inputs_protocol.hpp)
//   audit   {}                                                          ->  {watched, tampered?}: the worker's own code as loaded (worker_integrity.hpp)
//   end     {session}
// A worker never judges a call: its buffers go back to the host, which compares them with the
// reference's, computed in another worker (test_driver.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <backendbench/device_runtime.h>

#include "cases.hpp"
#include "measure/measurement.hpp"
#include "plugin_library.hpp"

namespace bb {

// Which function a session calls.
struct Target {
  enum class Kind { kernel_impl, reference, identity };
  Kind kind = Kind::identity;
  std::string library;  // empty for identity
  bool operator==(const Target&) const = default;
};
nlohmann::json to_json(const Target& t);
Target target_from_json(const nlohmann::json& j);

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
  std::string session;
  std::string manifest, op;
  int case_index = 0;
  std::optional<uint64_t> seed;
  CaseExpansion expansion;  // --random-cases and --variants: the case list holds them (cases.hpp)
  Target target;
  std::string device = "cpu";
  int device_index = 0;
  bool shareable = false;  // the call's device buffers in memory the checker can map (device_check.hpp)
  // The case's inputs made on the device (one recipe per input) rather than sent in a blob: a
  // device case whose buffers the checker compares there (test_driver.cpp).
  std::optional<std::vector<InputRecipe>> generate;
};
nlohmann::json to_json(const PrepareRequest& r);
PrepareRequest prepare_request_from_json(const nlohmann::json& j);

// One call of a session. Its inputs are the case's, or those of the blob that comes with it, or,
// with `generate`, made on the device (one recipe per input: a reference's checked call, whose
// worker holds no plugin under test), or, `staged`, as the checker left them in the device
// buffers (the implementation's side of that checked call: only its outputs are poisoned).
struct CallRequest {
  bool witnessed = true;
  bool return_buffers = true;
  bool staged = false;
  std::optional<std::vector<InputRecipe>> generate;
};
nlohmann::json to_json(const CallRequest& r);
CallRequest call_request_from_json(const nlohmann::json& j);

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

nlohmann::json to_json(const TimingOptions& o);
TimingOptions timing_options_from_json(const nlohmann::json& j);
// A measurement's samples and bookkeeping; the receiver recomputes the statistics.
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);

// probe: load a library and read its symbols and info record (plan.cpp asks, the worker answers).
struct ProbeRequest {
  std::string library;
  std::string op;
};

struct ProbeReply {
  bool loaded = false;
  bool unavailable = false;  // not loaded because this machine cannot run it (kPythonUnavailable): SKIPPED, not an error
  std::string error;
  bool has_kernel_impl = false;
  bool has_reference = false;
  PluginInfo info;
  bool imports_packages = false;  // a .py file that imports an installed package (PythonSurvey)
};

nlohmann::json to_json(const ProbeRequest& r);
ProbeRequest probe_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ProbeReply& r);
ProbeReply probe_reply_from_json(const nlohmann::json& j);

}  // namespace bb
