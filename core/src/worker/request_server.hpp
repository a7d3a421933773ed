// The worker's side of a test: prepared calls (a function, a case, a device: one bound call
// each, named by the role it plays in the test: impl, reference, baseline), prepared once, then
// called or timed as the host asks (worker_protocol.hpp; each command a method
// of WorkerService, served through worker_dispatch.hpp's table). Nothing here
// judges a call: its buffers go back to the host. The same code serves a worker process (the
// default) and the host itself (--no-isolate).
#pragma once

#include <map>
#include <memory>
#include <random>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plugin_library.hpp"
#include "protocol/sealed_blob.hpp"
#include "protocol/worker_dispatch.hpp"
#include "protocol/worker_protocol.hpp"
#include "worker/bound_call.hpp"
#include "worker/device_compare.hpp"
#include "worker/worker_integrity.hpp"

namespace bb {

class RequestServer final : public WorkerService {
 public:
  RequestServer();
  ~RequestServer() override;
  // One request (dispatch(): its command's method below).
  Message handle(const nlohmann::json& request, UniqueFd fd) { return dispatch(*this, request, std::move(fd)); }

  // Before anything is prepared.
  Message probe(const ProbeRequest& req, UniqueFd) override;
  Message probe_many(const ProbeManyRequest& req, UniqueFd) override;
  Message read_many(const ReadManyRequest& req, UniqueFd) override;
  Message generate(const GenerateRequest& req, UniqueFd) override;
  Message devices(const DevicesRequest& req, UniqueFd) override;
  Message warm(const WarmRequest& req, UniqueFd) override;
  // A prepared call's.
  Message prepare(const PrepareRequest& req, UniqueFd inputs) override;
  Message call(const CallRequest& req, UniqueFd variant) override;
  Message block(const BlockRequest& req, UniqueFd) override;
  Message pace(const PaceRequest& req, UniqueFd stage) override;
  Message buffers(const BuffersRequest& req, UniqueFd) override;
  Message export_mirror(const ExportRequest& req, UniqueFd) override;
  Message end(const EndRequest& req, UniqueFd) override;
  Message audit(const AuditRequest& req, UniqueFd) override;
  // The checker's (device_check.hpp): this worker holds no plugin.
  Message watch(const WatchRequest& req, UniqueFd expected) override;
  Message watch_mirror(const WatchMirrorRequest& req, UniqueFd memory) override;
  Message watch_reference(const WatchReferenceRequest& req, UniqueFd memory) override;
  Message stage(const StageRequest& req, UniqueFd) override;
  Message keep_case(const KeepCaseRequest& req, UniqueFd) override;
  Message expect(const ExpectRequest& req, UniqueFd expected) override;
  Message verify(const VerifyRequest& req, UniqueFd) override;
  Message keep_sample(const KeepSampleRequest& req, UniqueFd) override;
  Message verify_kept(const VerifyKeptRequest& req, UniqueFd) override;
  Message kept_home(const KeptHomeRequest& req, UniqueFd) override;
  Message unwatch(const UnwatchRequest& req, UniqueFd) override;

  ProbeReply probe_library(const ProbeRequest& request);
  // A sticky device error has left this process's device context unusable, or a call left
  // something running in it (a thread still writing, a child process): it must exit.
  bool poisoned() const { return poisoned_ || retired_; }
  // Watch this process's own code and GOT (worker_integrity.hpp): captured at the first
  // prepare, before the plugin loads; checked after every block and on "audit". For worker
  // processes, which run with every symbol bound at load.
  void watch_integrity() { watch_integrity_ = true; }

 private:
  struct PreparedCall;
  Expected<const PluginLibrary*> library(const std::string& path, const std::string& op);
  Expected<bb_kernel_fn> resolve(const Target& t, const std::string& op);
  Expected<ExecPlace> place_for(const std::string& device, int index);

  // The worker's own code captured (worker_integrity.hpp), once, before any plugin's: the
  // runtime of `device` loaded first.
  void capture_integrity(const std::string& device);
  // The prepared call a request names (its role), or the error reply that it is not there.
  Expected<PreparedCall*> prepared(const std::string& role);
  Message call_on(PreparedCall& s, const CallRequest& req, UniqueFd variant);
  Message block_on(PreparedCall& s, const TimingOptions& timing, bool return_buffers);
  // A survey's replies (probe_many, read_many).
  Message survey(const std::vector<std::string>& files, std::vector<std::string> ops, bool read_only);
  // A checker's reply: its error (empty: done).
  static Message checked(const std::string& error);
  // The prepared call's buffers (inputs, then outputs, guards included) as a sealed blob.
  Expected<SealedBlob> buffers_blob(PreparedCall& s);
  // One measurement of the prepared call, outputs rewritten before every sample.
  Expected<Measurement> measure(PreparedCall& s, const TimingOptions& timing);

  std::map<std::string, std::unique_ptr<PluginLibrary>> libraries_;
  std::map<std::string, void*> streams_;  // one stream per device, for the process's life
  std::map<std::string, std::unique_ptr<PreparedCall>> prepared_;
  std::mt19937_64 placement_draw_{std::random_device{}()};  // PreparedCall::replace_buffers
  DeviceChecker checker_;  // a checker worker's (no plugin in it): worker/device_compare.hpp
  bool poisoned_ = false;
  // The one device this worker sees (its runtime, its UUID) and the host's ordinal for it: a
  // worker of one GPU's slot (WorkerWalls::device_uuid). Unset: it sees the host's devices, by
  // their ordinals.
  struct OneDevice {
    std::string runtime, uuid;
    int ordinal = 0;
  };
  std::optional<OneDevice> one_device_;
  bool retired_ = false;
  bool watch_integrity_ = false;
  WorkerIntegrity integrity_;
};

}  // namespace bb
