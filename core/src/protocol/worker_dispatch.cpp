#include "protocol/worker_dispatch.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace bb {

namespace {
using Serve = Message (*)(WorkerService&, const nlohmann::json&, UniqueFd);

template <class Request, Message (WorkerService::*method)(const Request&, UniqueFd)>
Message serve(WorkerService& server, const nlohmann::json& request, UniqueFd fd) {
  Request r;
  try {
    r = read_request<Request>(request);
  } catch (const nlohmann::json::exception& e) {
    return error_message(fmt::format("a malformed '{}' request: {}", command_name(Request::kCommand), e.what()));
  }
  return (server.*method)(r, std::move(fd));
}

struct Row {
  WorkerCommand command;
  Serve serve;
};
template <class Request, Message (WorkerService::*method)(const Request&, UniqueFd)>
constexpr Row row() {
  return {Request::kCommand, &serve<Request, method>};
}

// One row per command, in WorkerCommand's order.
constexpr std::array<Row, kCommandCount> kTable = {
    row<ProbeRequest, &WorkerService::probe>(),
    row<ProbeManyRequest, &WorkerService::probe_many>(),
    row<ReadManyRequest, &WorkerService::read_many>(),
    row<GenerateRequest, &WorkerService::generate>(),
    row<DevicesRequest, &WorkerService::devices>(),
    row<WarmRequest, &WorkerService::warm>(),
    row<PrepareRequest, &WorkerService::prepare>(),
    row<CallRequest, &WorkerService::call>(),
    row<BlockRequest, &WorkerService::block>(),
    row<PaceRequest, &WorkerService::pace>(),
    row<BuffersRequest, &WorkerService::buffers>(),
    row<ExportRequest, &WorkerService::export_mirror>(),
    row<EndRequest, &WorkerService::end>(),
    row<AuditRequest, &WorkerService::audit>(),
    row<WatchRequest, &WorkerService::watch>(),
    row<WatchMirrorRequest, &WorkerService::watch_mirror>(),
    row<WatchReferenceRequest, &WorkerService::watch_reference>(),
    row<StageRequest, &WorkerService::stage>(),
    row<KeepCaseRequest, &WorkerService::keep_case>(),
    row<ExpectRequest, &WorkerService::expect>(),
    row<VerifyRequest, &WorkerService::verify>(),
    row<KeepSampleRequest, &WorkerService::keep_sample>(),
    row<VerifyKeptRequest, &WorkerService::verify_kept>(),
    row<KeptHomeRequest, &WorkerService::kept_home>(),
    row<UnwatchRequest, &WorkerService::unwatch>(),
};

constexpr bool in_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].command) != i) return false;
  return true;
}
static_assert(in_order(), "the table's rows follow WorkerCommand's order, one each");
}  // namespace

Message error_message(std::string error, bool sticky) {
  CallReply r;
  r.error = std::move(error);
  r.sticky = sticky;
  return Message{r.to_json(), {}};
}

Message WorkerService::not_served(WorkerCommand c) { return error_message(fmt::format("'{}' is not served by this worker", command_name(c))); }

Message dispatch(WorkerService& server, const nlohmann::json& request, UniqueFd fd) {
  const auto command = command_of(request);
  if (!command) {
    const auto cmd = request.is_object() ? request.find("cmd") : request.end();
    return Message{{{"error", fmt::format("unknown command {}", cmd != request.end() ? cmd->dump() : std::string("(none)"))}}, {}};
  }
  return kTable[static_cast<std::size_t>(*command)].serve(server, request, std::move(fd));
}

}  // namespace bb
