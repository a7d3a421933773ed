// What the worker's watch over its own code costs (worker_integrity.hpp): the capture at its
// first prepare, the GOT check after every timed block, the full check after every test. Run
// as a worker runs, every symbol bound at load:
//
//   LD_BIND_NOW=1 build/bb_micro_bench --benchmark_filter=Integrity
#include <benchmark/benchmark.h>

#include "worker/worker_integrity.hpp"

namespace {

void BM_IntegrityCapture(benchmark::State& state) {
  std::size_t bytes = 0, slots = 0;
  for (auto _ : state) {
    auto w = bb::WorkerIntegrity::capture();
    bytes = w.watched_bytes();
    slots = w.slot_count();
    benchmark::DoNotOptimize(w);
  }
  state.counters["watched_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["slots"] = static_cast<double>(slots);
}
BENCHMARK(BM_IntegrityCapture)->Unit(benchmark::kMillisecond);

void BM_IntegrityCheckSlots(benchmark::State& state) {
  const auto w = bb::WorkerIntegrity::capture();
  for (auto _ : state) benchmark::DoNotOptimize(w.check_slots());
}
BENCHMARK(BM_IntegrityCheckSlots)->Unit(benchmark::kMicrosecond);

void BM_IntegrityCheckAll(benchmark::State& state) {
  const auto w = bb::WorkerIntegrity::capture();
  for (auto _ : state) benchmark::DoNotOptimize(w.check_all());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * w.watched_bytes()));
}
BENCHMARK(BM_IntegrityCheckAll)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
