// The worker protocol's table (worker_protocol.hpp) and its one dispatch (worker_dispatch.hpp):
// every command named once on the wire, every request read back as it was written, and a
// request served by its own method, whatever serves it.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "fake_executor.hpp"
#include "protocol/case_json.hpp"
#include "protocol/worker_dispatch.hpp"
#include "protocol/worker_protocol.hpp"
#include "worker/request_server.hpp"

namespace {

TEST(WorkerProtocol, EveryCommandHasOneNameThatReadsBack) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < bb::kCommandCount; ++i) {
    const auto c = static_cast<bb::WorkerCommand>(i);
    const std::string name = bb::command_name(c);
    EXPECT_TRUE(names.insert(name).second) << name << " is named twice";
    EXPECT_EQ(bb::command_named(name), c) << name;
    EXPECT_EQ(bb::command_of({{"cmd", name}}), c) << name;
  }
  EXPECT_EQ(bb::command_name(bb::WorkerCommand::export_mirror), std::string("export"));
  EXPECT_FALSE(bb::command_named("exportt"));
  EXPECT_FALSE(bb::command_of({{"cmd", 3}}));
  EXPECT_FALSE(bb::command_of(nlohmann::json::array()));
}

TEST(WorkerProtocol, RequestsReadBackAsWritten) {
  bb::WatchReferenceRequest w{2, 4096, 8192, 100};
  const auto wire = nlohmann::json::parse(bb::request_json(w).dump());
  EXPECT_EQ(wire.value("cmd", ""), "watch_reference");
  const auto back = bb::read_request<bb::WatchReferenceRequest>(wire);
  EXPECT_EQ(back.mirror, 2);
  EXPECT_EQ(back.bytes, 4096u);
  EXPECT_EQ(back.offset, 8192u);
  EXPECT_EQ(back.size, 100u);

  bb::BlockRequest b;
  b.role = "baseline";
  b.timing.rule.min_samples = 7;
  b.timing.mode = bb::TimingMode::hot;
  b.return_buffers = false;
  const auto bb2 = bb::read_request<bb::BlockRequest>(nlohmann::json::parse(bb::request_json(b).dump()));
  EXPECT_EQ(bb2.role, "baseline");
  EXPECT_EQ(bb2.timing.rule.min_samples, 7u);
  EXPECT_EQ(bb2.timing.mode, bb::TimingMode::hot);
  EXPECT_FALSE(bb2.return_buffers);

  bb::CallRequest c;
  c.role = "reference";
  c.witnessed = false;
  c.generate = std::vector<bb::InputRecipe>(2);
  const auto c2 = bb::read_request<bb::CallRequest>(nlohmann::json::parse(bb::request_json(c).dump()));
  EXPECT_EQ(c2.role, "reference");
  EXPECT_FALSE(c2.witnessed);
  ASSERT_TRUE(c2.generate);
  EXPECT_EQ(c2.generate->size(), 2u);

  // A field left out keeps its default; an empty request is an object on the wire.
  EXPECT_EQ(bb::read_request<bb::WarmRequest>({{"cmd", "warm"}}).device, "cpu");
  EXPECT_TRUE(bb::request_json(bb::AuditRequest{}).is_object());
  EXPECT_EQ(bb::request_json(bb::AuditRequest{}).size(), 1u) << "its cmd alone";

  bb::VerifyReply v;
  v.ok = true;
  v.zeros_pass = true;
  const auto v2 = bb::verify_reply_from_json(nlohmann::json::parse(bb::to_json(v).dump()));
  EXPECT_TRUE(v2.ok);
  EXPECT_EQ(v2.zeros_pass, true);
  EXPECT_FALSE(v2.errors);
  EXPECT_FALSE(bb::verify_reply_from_json(nlohmann::json::array()).error.empty()) << "not an object: an error, never a crash";
}

// The case travels as one value (case_json.hpp): every field reads back, non-finite numbers
// bit for bit, a string never read as a number.
TEST(CaseJson, ACaseReadsBackWholeNonFiniteNumbersToo) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  bb::ConcreteCase c;
  c.index = 7;
  c.id = "correctness/small~tiny[n=3]";
  c.name = "small~tiny";
  c.variant = "tiny";
  c.kind = bb::CaseKind::performance;
  c.params = {{"n", int64_t{3}}, {"eps", -inf}, {"exact", true}, {"mode", std::string("1.5")}};
  bb::ConcreteTensor x;
  x.name = "x";
  x.shape = {3, 0, 2};
  x.dtype = bb::DType::bfloat16;
  x.init.kind = bb::InitKind::full;
  x.init.a = nan;
  x.init.b = inf;
  x.init.a_expr = "1 / n";
  x.init.twist = 2;
  x.init.twist_log2 = -12;
  x.variants = 5;
  c.inputs = {x};
  bb::ConcreteOutput y;
  y.name = "y";
  y.shape = {3};
  y.dtype = bb::DType::float16;
  y.inplace_input = 0;
  y.tolerance = {1e-3, 2e-2, true};
  c.outputs = {y};
  c.attrs = {{"alpha", nan}, {"dims", std::vector<int64_t>{1, -1}}, {"scales", std::vector<double>{1.5, -inf}}, {"name", std::string("inf")}};
  c.flops = 6.0;
  c.seed = 0xfedcba9876543210ull;
  c.devices = {"cuda"};

  const bb::ConcreteCase b = bb::case_from_json(nlohmann::json::parse(bb::to_json(c).dump()));
  EXPECT_EQ(b.index, 7);
  EXPECT_EQ(b.id, c.id);
  EXPECT_EQ(b.name, c.name);
  EXPECT_EQ(b.variant, "tiny");
  EXPECT_EQ(b.kind, bb::CaseKind::performance);
  ASSERT_EQ(b.params.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(b.params[0].second), 3);
  EXPECT_EQ(std::get<double>(b.params[1].second), -inf);
  EXPECT_TRUE(std::get<bool>(b.params[2].second));
  EXPECT_EQ(std::get<std::string>(b.params[3].second), "1.5") << "a string stays a string";
  ASSERT_EQ(b.inputs.size(), 1u);
  EXPECT_EQ(b.inputs[0].shape, (std::vector<int64_t>{3, 0, 2}));
  EXPECT_EQ(b.inputs[0].dtype, bb::DType::bfloat16);
  EXPECT_EQ(b.inputs[0].init.kind, bb::InitKind::full);
  EXPECT_TRUE(std::isnan(b.inputs[0].init.a));
  EXPECT_EQ(b.inputs[0].init.b, inf);
  EXPECT_EQ(b.inputs[0].init.a_expr, "1 / n");
  EXPECT_EQ(b.inputs[0].init.twist, 2u);
  EXPECT_EQ(b.inputs[0].init.twist_log2, -12);
  EXPECT_EQ(b.inputs[0].variants, 5u);
  ASSERT_EQ(b.outputs.size(), 1u);
  EXPECT_EQ(b.outputs[0].inplace_input, 0);
  EXPECT_EQ(b.outputs[0].dtype, bb::DType::float16);
  EXPECT_DOUBLE_EQ(b.outputs[0].tolerance.rtol, 2e-2);
  EXPECT_TRUE(b.outputs[0].tolerance.scale_atol);
  ASSERT_EQ(b.attrs.size(), 4u);
  EXPECT_TRUE(std::isnan(std::get<double>(b.attrs[0].second)));
  EXPECT_EQ(std::get<std::vector<int64_t>>(b.attrs[1].second), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(std::get<std::vector<double>>(b.attrs[2].second), (std::vector<double>{1.5, -inf}));
  EXPECT_EQ(std::get<std::string>(b.attrs[3].second), "inf");
  EXPECT_EQ(b.flops, 6.0);
  EXPECT_FALSE(b.bytes);
  EXPECT_EQ(b.seed, c.seed);
  EXPECT_EQ(b.devices, c.devices);
  EXPECT_EQ(bb::to_json(b).dump(), bb::to_json(c).dump());
}

// A server that serves two commands and records what it was given.
class Recording final : public bb::WorkerService {
 public:
  bb::Message stage(const bb::StageRequest& r, bb::UniqueFd fd) override {
    staged = r.inputs;
    had_fd = static_cast<bool>(fd);
    return {bb::CheckReply{}, {}};
  }
  bb::Message end(const bb::EndRequest& r, bb::UniqueFd) override {
    ended = r.role;
    return {nlohmann::json::object(), {}};
  }
  int staged = -1;
  bool had_fd = false;
  std::string ended;
};

TEST(WorkerDispatch, ARequestReachesItsOwnMethodTyped) {
  Recording r;
  auto m = bb::dispatch(r, bb::request_json(bb::StageRequest{3}), bb::UniqueFd(open("/dev/null", O_RDONLY)));
  EXPECT_EQ(r.staged, 3);
  EXPECT_TRUE(r.had_fd) << "the descriptor that came with it is the method's";
  EXPECT_EQ(m.body.value("error", "?"), "");
  bb::dispatch(r, bb::request_json(bb::EndRequest{"impl"}), {});
  EXPECT_EQ(r.ended, "impl");
}

TEST(WorkerDispatch, UnknownUnservedAndMalformedRequestsAreErrorsNeverCrashes) {
  Recording r;
  auto unknown = bb::dispatch(r, {{"cmd", "format_disk"}}, {});
  EXPECT_NE(unknown.body.value("error", "").find("unknown command \"format_disk\""), std::string::npos) << unknown.body.dump();
  auto none = bb::dispatch(r, nlohmann::json::array(), {});
  EXPECT_NE(none.body.value("error", "").find("unknown command"), std::string::npos) << none.body.dump();
  auto unserved = bb::dispatch(r, bb::request_json(bb::AuditRequest{}), {});
  EXPECT_NE(unserved.body.value("error", "").find("'audit' is not served"), std::string::npos) << unserved.body.dump();
  auto malformed = bb::dispatch(r, {{"cmd", "stage"}, {"inputs", "three"}}, {});
  EXPECT_NE(malformed.body.value("error", "").find("a malformed 'stage' request"), std::string::npos) << malformed.body.dump();
  EXPECT_EQ(r.staged, -1) << "a malformed request reaches no method";
}

// A target names its pass: the backward's functions are other symbols of the same library.
TEST(WorkerProtocol, ATargetCarriesItsPass) {
  bb::PrepareRequest p;
  p.target = {bb::Target::Kind::kernel_impl, "scale_good.so", bb::Target::Pass::backward};
  const auto back = bb::read_request<bb::PrepareRequest>(nlohmann::json::parse(bb::request_json(p).dump()));
  EXPECT_EQ(back.target, p.target);
  EXPECT_EQ(back.target.pass, bb::Target::Pass::backward);
  EXPECT_EQ(bb::target_from_json({{"kind", "reference"}, {"library", "r.so"}}).pass, bb::Target::Pass::forward) << "unsaid: the forward";
  p.target = {bb::Target::Kind::reference, "r.so", bb::Target::Pass::differences};
  EXPECT_EQ(bb::read_request<bb::PrepareRequest>(nlohmann::json::parse(bb::request_json(p).dump())).target.pass, bb::Target::Pass::differences)
      << "finite differences of its forward";
  for (const auto pass : {bb::Target::Pass::pair, bb::Target::Pass::pair_differences}) {  // fwd_bwd's
    p.target.pass = pass;
    EXPECT_EQ(bb::read_request<bb::PrepareRequest>(nlohmann::json::parse(bb::request_json(p).dump())).target.pass, pass);
  }
  EXPECT_EQ(bb::pass_of(bb::Mode::fwd_bwd), bb::Target::Pass::pair);
}

TEST(CaseJson, APrepareWithABrokenCaseIsAnErrorReplyNeverACrash) {
  bb::PrepareRequest p;
  p.op = "scale";
  p.test_case.id = "c";
  p.test_case.inputs.resize(1);
  p.test_case.outputs.resize(1);
  nlohmann::json wire = bb::request_json(p);
  EXPECT_EQ(bb::read_request<bb::PrepareRequest>(wire).test_case.id, "c");
  Recording r;
  auto broken = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json w = wire;
    edit(w["case"]);
    return bb::dispatch(r, w, {}).body.value("error", "");
  };
  EXPECT_NE(broken([](auto& c) { c.erase("inputs"); }).find("a malformed 'prepare' request"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["inputs"][0]["shape"] = {4, -1}; }).find("a negative dimension"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["inputs"][0]["dtype"] = "float128"; }).find("not a dtype"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["outputs"][0]["inplace_input"] = 3; }).find("no such input"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["kind"] = 9; }).find("out of range"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["attrs"] = nlohmann::json::array({nlohmann::json::array({"a", nlohmann::json::array({8, 1})})}); }).find("kind"), std::string::npos);
  EXPECT_NE(broken([](auto& c) { c["flops"] = {{"nonfinite", "huge"}}; }).find("not a number"), std::string::npos);
}

// The worker and the fake serve through the same table: both are WorkerServices.
static_assert(std::is_base_of_v<bb::WorkerService, bb::RequestServer>);

TEST(WorkerDispatch, TheFakeWorkerServesThroughTheSameTable) {
  auto fake = bb_fake::FakeWorkers::create();
  auto worker = fake->make();
  // Served by the fake's own method (the table's row for devices).
  auto devices = worker->execute(bb::request_json(bb::DevicesRequest{.kind = "cuda"}), 1);
  EXPECT_EQ(devices.reply.value("available", true), false);
  // A command the fake does not model: the table's default, in the fake's words.
  auto verify = worker->execute(bb::request_json(bb::VerifyRequest{}), 1);
  EXPECT_NE(verify.reply.value("error", "").find("the fake worker does not serve 'verify'"), std::string::npos) << verify.reply.dump();
  // And the real server answers a command it does serve without a plugin in sight.
  bb::RequestServer server;
  auto end = server.handle(bb::request_json(bb::EndRequest{"nothing"}), {});
  EXPECT_TRUE(end.body.is_object());
  auto call = server.handle(bb::request_json(bb::CallRequest{}), {});
  EXPECT_NE(call.body.value("error", "").find("nothing prepared as ''"), std::string::npos) << call.body.dump();
}

}  // namespace
