// What a worker's start costs (issue 21, "workers that start once"): a fresh worker process
// behind its walls (namespaces, a PID namespace with its own /proc, a cgroup, the read-only
// root, a user of its own where it can) answering its first request, against a request to a
// worker already running. With a device, the first "devices" request of a worker also makes its
// runtime's context. Run from the build directory, as the host runs its workers:
//
//   build/bb_micro_bench --benchmark_filter=Worker
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "run/workers/executor.hpp"
#include "run/workers/sandbox.hpp"
#include "run/workers/worker_starts.hpp"

namespace {

bb::WorkerWalls walls(bool sandboxed) {
  bb::WorkerWalls w;
  w.spec.enabled = sandboxed && bb::sandbox_support().namespaces;
  w.spec.readonly_dirs.push_back(std::filesystem::path(BB_WORKER_BINARY).parent_path().string());
  w.drop_capabilities = w.spec.enabled;
  return w;
}

// A new worker answering one request (a probe of no library: an error reply, no plugin loaded).
void BM_WorkerStartAndFirstRequest(benchmark::State& state) {
  const bool sandboxed = state.range(0) != 0;
  for (auto _ : state) {
    auto e = bb::make_isolated_executor(BB_WORKER_BINARY);
    e->set_walls(walls(sandboxed));
    auto out = e->execute({{"cmd", "probe"}, {"library", ""}, {"op", "x"}}, 30);
    if (out.status != bb::ExecOutcome::Status::ok) state.SkipWithError(out.detail.c_str());
    e->recycle();  // the worker retires: its teardown is part of what a start costs
  }
  state.SetLabel(sandboxed ? (bb::sandbox_support().namespaces ? "behind its walls" : "no namespaces here: unsandboxed") : "no walls");
}
BENCHMARK(BM_WorkerStartAndFirstRequest)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// A request to a worker that is running already: the round trip a started worker costs.
void BM_WorkerRequestWhenRunning(benchmark::State& state) {
  auto e = bb::make_isolated_executor(BB_WORKER_BINARY);
  e->set_walls(walls(true));
  e->execute({{"cmd", "probe"}, {"library", ""}, {"op", "x"}}, 30);
  for (auto _ : state) {
    auto out = e->execute({{"cmd", "probe"}, {"library", ""}, {"op", "x"}}, 30);
    if (out.status != bb::ExecOutcome::Status::ok) state.SkipWithError(out.detail.c_str());
  }
}
BENCHMARK(BM_WorkerRequestWhenRunning)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A new worker asked about a device kind ("cuda"): its runtime loaded and, where a device is,
// its context made. Without a device this is the cost of finding out.
void BM_WorkerStartAndDeviceContext(benchmark::State& state) {
  for (auto _ : state) {
    auto e = bb::make_isolated_executor(BB_WORKER_BINARY);
    e->set_walls(walls(true));
    auto out = e->execute({{"cmd", "devices"}, {"kind", "cuda"}, {"measure_peak", false}}, 60);
    if (out.status != bb::ExecOutcome::Status::ok) state.SkipWithError(out.detail.c_str());
    state.SetLabel(out.reply.value("available", false) ? "cuda: a device" : "cuda: " + out.reply.value("reason", std::string("none")));
    e->recycle();
  }
}
BENCHMARK(BM_WorkerStartAndDeviceContext)->Unit(benchmark::kMillisecond)->UseRealTime();

// N device workers at once (worker_starts.hpp): each one's start and context ("warm" on a
// thread of its own), then, timed apart, their end side by side. Whether contexts are made and
// torn down in parallel, and what a run's last moments cost.
void WarmDeviceWorkers(std::vector<std::unique_ptr<bb::Executor>>& ws, std::size_t n) {
  bb::WorkerStarts starts(true);
  for (std::size_t i = 0; i < n; ++i) {
    ws.push_back(bb::make_isolated_executor(BB_WORKER_BINARY));
    ws.back()->set_walls(walls(true));
    starts.warm(*ws.back(), {{"cmd", "warm"}, {"device", "cuda"}, {"device_index", 0}}, 60);
  }
  starts.wait_started();
}
void BM_DeviceWorkersStartTogether(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::unique_ptr<bb::Executor>> ws;
    WarmDeviceWorkers(ws, static_cast<std::size_t>(state.range(0)));
    state.PauseTiming();
    bb::WorkerStarts ends(true);
    for (auto& w : ws) ends.retire(std::move(w));
    ends.settle();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_DeviceWorkersStartTogether)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
void BM_DeviceWorkersEndTogether(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::unique_ptr<bb::Executor>> ws;
    WarmDeviceWorkers(ws, static_cast<std::size_t>(state.range(0)));
    state.ResumeTiming();
    bb::WorkerStarts ends(true);
    for (auto& w : ws) ends.retire(std::move(w));
    ends.settle();
  }
}
BENCHMARK(BM_DeviceWorkersEndTogether)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
