// The worker's side of a test: sessions of one bound call each (a function, a case, a device),
// prepared once, then called or timed as the host asks (worker_protocol.hpp). Nothing here
// judges a call: its buffers go back to the host. The same code serves a worker process (the
// default) and the host itself (--no-isolate).
#pragma once

#include <map>
#include <random>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/bound_call.hpp"
#include "device_check.hpp"
#include "plugin_library.hpp"
#include "sealed_blob.hpp"
#include "worker/worker_integrity.hpp"
#include "worker_protocol.hpp"

namespace bb {

// A message of the worker protocol: its JSON, and a sealed memfd when tensors travel with it.
struct Message {
  nlohmann::json body;
  UniqueFd fd;
};

class RequestServer {
 public:
  RequestServer();
  ~RequestServer();
  // One request, by its "cmd" (worker_protocol.hpp): probe, probe_many, read_many, generate,
  // warm, prepare, audit, call, block, end, export, pace, buffers; and the device checker's:
  // watch, watch_mirror, watch_reference, stage, keep_case, expect, verify, keep_sample,
  // verify_kept, kept_home, unwatch.
  Message handle(const nlohmann::json& request, UniqueFd fd);
  ProbeReply probe(const ProbeRequest& request);
  // A sticky device error has left this process's device context unusable, or a call left
  // something running in it (a thread still writing, a child process): it must exit.
  bool poisoned() const { return poisoned_ || retired_; }
  // Watch this process's own code and GOT (worker_integrity.hpp): captured at the first
  // prepare, before the plugin loads; checked after every block and on "audit". For worker
  // processes, which run with every symbol bound at load.
  void watch_integrity() { watch_integrity_ = true; }

 private:
  struct OpData {
    Manifest manifest;
    std::vector<ConcreteCase> cases;
  };
  struct Session;
  Expected<const OpData*> op_data(const std::string& manifest, const std::string& op, std::optional<uint64_t> seed,
                                   const CaseExpansion& expansion);
  Expected<const PluginLibrary*> library(const std::string& path, const std::string& op);
  Expected<bb_kernel_fn> resolve(const Target& t, const std::string& op);
  Expected<ExecPlace> place_for(const std::string& device, int index);

  // The steps, as named in worker_protocol.hpp.
  Message prepare(const PrepareRequest& req, UniqueFd inputs);
  // The worker's own code captured (worker_integrity.hpp), once, before any plugin's: the
  // runtime of `device` loaded first.
  void capture_integrity(const std::string& device);
  Message call(Session& s, const CallRequest& req, UniqueFd variant);
  Message block(Session& s, const TimingOptions& timing, bool return_buffers);
  Message audit();
  Message export_mirror(Session& s, const nlohmann::json& request);
  Message buffers(Session& s);
  Message check(const std::string& cmd, const nlohmann::json& request, UniqueFd fd);
  // The session's buffers (inputs, then outputs, guards included) as a sealed blob.
  Expected<SealedBlob> buffers_blob(Session& s);
  // One measurement of the session's call, outputs rewritten before every sample.
  Expected<Measurement> measure(Session& s, const TimingOptions& timing);

  std::map<std::string, std::unique_ptr<OpData>> ops_;
  std::map<std::string, std::unique_ptr<PluginLibrary>> libraries_;
  std::map<std::string, void*> streams_;  // one stream per device, for the process's life
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  std::mt19937_64 placement_draw_{std::random_device{}()};  // Session::replace_buffers
  DeviceChecker checker_;  // a checker worker's (no plugin in it): device_check.hpp
  bool poisoned_ = false;
  // The one device this worker sees (its UUID) and the host's ordinal for it: a worker of one
  // GPU's slot (WorkerWalls::device_uuid). Unset: it sees the host's devices, by their ordinals.
  std::optional<std::pair<std::string, int>> one_device_;
  bool retired_ = false;
  bool watch_integrity_ = false;
  WorkerIntegrity integrity_;
};

}  // namespace bb
