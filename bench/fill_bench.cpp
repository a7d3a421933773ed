// How fast the host makes a tensor's values (init.hpp's fill_tensor, the manifest's generators
// shared with the device runtimes; fresh_inputs.hpp's for every timed CPU sample): the cost of
// fresh inputs per sample is this, per element. docs/PERFORMANCE.md, "Fresh inputs".
//
//   build/bench/bb_micro_bench --benchmark_filter=Fill
#include <benchmark/benchmark.h>

#include <vector>

#include "init.hpp"
#include "plan/cases.hpp"
#include "run/fresh_inputs.hpp"

namespace {

bb::ConcreteTensor tensor(bb::InitKind kind, int64_t n) {
  bb::ConcreteTensor t;
  t.name = "x";
  t.shape = {n};
  t.dtype = bb::DType::float32;
  t.init.kind = kind;
  t.init.a = kind == bb::InitKind::randint ? 0 : (kind == bb::InitKind::uniform ? -1 : 0);
  t.init.b = kind == bb::InitKind::randint ? 100 : 1;
  return t;
}

template <bool kFresh>
void BM_Fill(benchmark::State& state) {
  const auto kind = static_cast<bb::InitKind>(state.range(0));
  const bb::ConcreteTensor t = tensor(kind, state.range(1));
  std::vector<uint8_t> data(t.nbytes());
  uint64_t seed = 1;
  for (auto _ : state) {
    if constexpr (kFresh) {
      if (!bb::fill_fresh(t, data.data(), ++seed)) state.SkipWithError("fill_fresh");
    } else {
      auto s = bb::fill_tensor(t, data.data(), ++seed, ".");
      if (!s) state.SkipWithError(s.error().message.c_str());
    }
    benchmark::DoNotOptimize(data.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(1));
  state.SetLabel(bb::init_kind_name(kind));
}
void Args(benchmark::internal::Benchmark* b) {
  for (auto k : {bb::InitKind::randn, bb::InitKind::uniform, bb::InitKind::randint}) b->Args({static_cast<int64_t>(k), 1 << 20});
}
BENCHMARK(BM_Fill<false>)->Name("BM_FillTensor")->Apply(Args)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Fill<true>)->Name("BM_FillFresh")->Apply(Args)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
