// --no-isolate: tests run in the host itself, for debuggers. A crash takes the host down; a
// hang is not interrupted.
#include "executor.hpp"

namespace bb {

namespace {
class InProcessExecutor final : public Executor {
 public:
  ExecOutcome execute(const nlohmann::json& request, double /*timeout_seconds*/) override {
    ExecOutcome out;
    out.reply = handle_request(request);
    return out;
  }
};
}  // namespace

std::unique_ptr<Executor> make_in_process_executor() { return std::make_unique<InProcessExecutor>(); }

}  // namespace bb
