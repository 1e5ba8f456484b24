// Pool allocate+free latency (the reused-size case the library hits on every
// operation) against the system allocator; the CUDA baselines are in
// bench_pool_cuda.cu. Sizes 1 KiB .. 64 MiB.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include <marg/numeric/backend.hpp>
#include <marg/numeric/pool.hpp>

#ifdef MARG_BENCH_CUDA
void marg_bench_register_cuda();
#endif

namespace {

void size_args(benchmark::internal::Benchmark* b) {
  for (long s = 1 << 10; s <= 64l << 20; s *= 8) b->Arg(s);
  b->Arg(64l << 20);
}

// pool: allocate and free the same size on the thread's stream
void BM_pool_allocate_free(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  marg::deallocate(marg::allocate(bytes), bytes);  // warm: thread cache and arena
  for (auto _ : state) {
    void* p = marg::allocate(bytes);
    benchmark::DoNotOptimize(p);
    marg::deallocate(p, bytes);
  }
  state.SetLabel(marg::device_count() > 0 ? "managed pool" : "host pool");
}
BENCHMARK(BM_pool_allocate_free)->Apply(size_args);

// pool: 16 blocks of mixed sizes live at once, freed in another order
void BM_pool_mixed_16(benchmark::State& state) {
  const std::size_t sizes[4] = {100, 4000, 70000, 1 << 20};
  void* live[16];
  for (auto _ : state) {
    for (int i = 0; i < 16; ++i) live[i] = marg::allocate(sizes[i % 4]);
    for (int i = 15; i >= 0; --i) marg::deallocate(live[(i * 7) % 16], sizes[((i * 7) % 16) % 4]);
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_pool_mixed_16);

// glibc malloc with 256-byte alignment, for comparison
void BM_aligned_alloc_free(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_aligned_alloc_free)->Apply(size_args);

}  // namespace

int main(int argc, char** argv) {
#ifdef MARG_BENCH_CUDA
  marg_bench_register_cuda();
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
