// The worker protocol served: a method per command (worker_protocol.hpp) and one table that reads
// a request, calls its method and hands back the reply. The worker (worker/request_server.hpp)
// and the unit tests' fake worker (test/unit/fake_executor.hpp) both serve through it, so a new
// command is a row of the enum, a request struct, a method here and its row in the table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "protocol/sealed_blob.hpp"
#include "protocol/worker_protocol.hpp"

namespace bb {

// A message of the worker protocol: its JSON, and a sealed memfd when tensors travel with it.
struct Message {
  nlohmann::json body;
  UniqueFd fd;
};

// A failed command's reply (CallReply's shape: "error", and "sticky" for a sticky device error).
Message error_message(std::string error, bool sticky = false);

// What serves the protocol. Each method gets its request and the descriptor that came with it
// (a blob, a device's memory, a pacing socket), if any; one not overridden answers an error
// naming its command.
class WorkerService {
 public:
  virtual ~WorkerService() = default;
  virtual Message probe(const ProbeRequest&, UniqueFd) { return not_served(WorkerCommand::probe); }
  virtual Message probe_many(const ProbeManyRequest&, UniqueFd) { return not_served(WorkerCommand::probe_many); }
  virtual Message read_many(const ReadManyRequest&, UniqueFd) { return not_served(WorkerCommand::read_many); }
  virtual Message generate(const GenerateRequest&, UniqueFd) { return not_served(WorkerCommand::generate); }
  virtual Message devices(const DevicesRequest&, UniqueFd) { return not_served(WorkerCommand::devices); }
  virtual Message warm(const WarmRequest&, UniqueFd) { return not_served(WorkerCommand::warm); }
  virtual Message prepare(const PrepareRequest&, UniqueFd) { return not_served(WorkerCommand::prepare); }
  virtual Message call(const CallRequest&, UniqueFd) { return not_served(WorkerCommand::call); }
  virtual Message block(const BlockRequest&, UniqueFd) { return not_served(WorkerCommand::block); }
  virtual Message pace(const PaceRequest&, UniqueFd) { return not_served(WorkerCommand::pace); }
  virtual Message buffers(const BuffersRequest&, UniqueFd) { return not_served(WorkerCommand::buffers); }
  virtual Message export_mirror(const ExportRequest&, UniqueFd) { return not_served(WorkerCommand::export_mirror); }
  virtual Message end(const EndRequest&, UniqueFd) { return not_served(WorkerCommand::end); }
  virtual Message audit(const AuditRequest&, UniqueFd) { return not_served(WorkerCommand::audit); }
  virtual Message watch(const WatchRequest&, UniqueFd) { return not_served(WorkerCommand::watch); }
  virtual Message watch_mirror(const WatchMirrorRequest&, UniqueFd) { return not_served(WorkerCommand::watch_mirror); }
  virtual Message watch_reference(const WatchReferenceRequest&, UniqueFd) { return not_served(WorkerCommand::watch_reference); }
  virtual Message stage(const StageRequest&, UniqueFd) { return not_served(WorkerCommand::stage); }
  virtual Message keep_case(const KeepCaseRequest&, UniqueFd) { return not_served(WorkerCommand::keep_case); }
  virtual Message expect(const ExpectRequest&, UniqueFd) { return not_served(WorkerCommand::expect); }
  virtual Message verify(const VerifyRequest&, UniqueFd) { return not_served(WorkerCommand::verify); }
  virtual Message keep_sample(const KeepSampleRequest&, UniqueFd) { return not_served(WorkerCommand::keep_sample); }
  virtual Message verify_kept(const VerifyKeptRequest&, UniqueFd) { return not_served(WorkerCommand::verify_kept); }
  virtual Message kept_home(const KeptHomeRequest&, UniqueFd) { return not_served(WorkerCommand::kept_home); }
  virtual Message unwatch(const UnwatchRequest&, UniqueFd) { return not_served(WorkerCommand::unwatch); }

 protected:
  // What a command this server does not serve answers. Overridable (the fake says it is a fake).
  virtual Message not_served(WorkerCommand c);
};

// `request`'s command read, its fields read into its request struct, its method called. A request
// that names no command, or whose fields have the wrong types, gets an error reply.
Message dispatch(WorkerService& server, const nlohmann::json& request, UniqueFd fd);

}  // namespace bb
