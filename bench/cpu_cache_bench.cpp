// What evicting a case's buffers from the CPU's caches costs before each cold sample
// (cpu_cache.hpp): a 48 MB case (vector_add's 4M float32: two inputs and the output), every line
// dirty as a call leaves its output, with clflush and with clflushopt.
//
//   build/bb_micro_bench --benchmark_filter=Evict
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "measure/cpu_cache.hpp"

namespace {

void BM_EvictDirtyBuffers(benchmark::State& state) {
  const auto with = static_cast<bb::EvictWith>(state.range(0));
  std::vector<unsigned char> data(static_cast<std::size_t>(state.range(1)) << 20);
  unsigned char v = 1;
  for (auto _ : state) {
    state.PauseTiming();
    std::memset(data.data(), v++, data.size());  // dirty, as a call leaves its buffers
    state.ResumeTiming();
    bb::evict_from_cpu_caches(data.data(), data.size(), with);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.size()));
  state.SetLabel(with == bb::EvictWith::clflush ? "clflush" : bb::evict_instruction());
}
BENCHMARK(BM_EvictDirtyBuffers)
    ->Args({static_cast<int>(bb::EvictWith::clflush), 48})
    ->Args({static_cast<int>(bb::EvictWith::clflushopt), 48})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
