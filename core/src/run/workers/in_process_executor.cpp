// --no-isolate: requests run in the host itself, for debuggers. A crash takes the host down; a
// hang is not interrupted; none of the walls of a worker process apply (docs/RELIABILITY.md).
#include <unistd.h>

#include <chrono>

#include "run/workers/executor.hpp"
#include "worker/request_server.hpp"

namespace bb {

namespace {
class InProcessExecutor final : public Executor {
 public:
  ExecOutcome execute(const nlohmann::json& request, double /*timeout_seconds*/, int fd) override {
    const auto t0 = std::chrono::steady_clock::now();
    ExecOutcome out;
    Message reply = handle_request(request, UniqueFd(fd >= 0 ? dup(fd) : -1));
    out.reply = std::move(reply.body);
    out.fd = std::move(reply.fd);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
};
}  // namespace

std::unique_ptr<Executor> make_in_process_executor() { return std::make_unique<InProcessExecutor>(); }

}  // namespace bb
