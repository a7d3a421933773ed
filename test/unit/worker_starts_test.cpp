// Whether a "warm" request got its worker ready: the reply is the worker's, which a plugin's
// process writes; any shape of it is an answer, never an exception.
#include <gtest/gtest.h>

#include "worker_starts.hpp"

namespace {

bb::ExecOutcome ok(nlohmann::json reply) {
  bb::ExecOutcome out;
  out.status = bb::ExecOutcome::Status::ok;
  out.reply = std::move(reply);
  return out;
}

}  // namespace

TEST(WorkerStarts, AWarmReplyIsReadWhateverItsShape) {
  EXPECT_TRUE(bb::warmed(ok(nlohmann::json::object())));
  EXPECT_TRUE(bb::warmed(ok({{"error", ""}})));
  EXPECT_FALSE(bb::warmed(ok({{"error", "no cuda device"}})));
  bb::ExecOutcome crashed = ok(nlohmann::json::object());
  crashed.status = bb::ExecOutcome::Status::crashed;
  EXPECT_FALSE(bb::warmed(crashed));
  // Of another type than a string: not ready, and no exception.
  for (const auto& reply : {nlohmann::json{{"error", 7}}, nlohmann::json{{"error", nullptr}}, nlohmann::json{{"error", {1, 2}}}}) {
    bool ready = true;
    EXPECT_NO_THROW(ready = bb::warmed(ok(reply))) << reply.dump();
    EXPECT_FALSE(ready) << reply.dump();
  }
}
