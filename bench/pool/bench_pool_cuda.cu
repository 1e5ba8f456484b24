// CUDA baselines for the pool benchmark: cudaMallocManaged/cudaFree and
// cudaMallocAsync/cudaFreeAsync latency, and the cost of a kernel's first
// touch of managed memory with and without cudaMemPrefetchAsync. Every case
// reports an error (so it is skipped) when no GPU is usable.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstring>

#include <marg/numeric/backend.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

namespace {

bool no_gpu(benchmark::State& state) {
  if (marg::device_count() > 0) return false;
  state.SkipWithError("no CUDA device");
  return true;
}

bool failed(benchmark::State& state, cudaError_t e) {
  if (e == cudaSuccess) return false;
  state.SkipWithError(cudaGetErrorString(e));
  return true;
}

void size_args(benchmark::internal::Benchmark* b) {
  for (long s = 1 << 10; s <= 64l << 20; s *= 8) b->Arg(s);
  b->Arg(64l << 20);
}

void BM_cuda_malloc_managed_free(benchmark::State& state) {
  if (no_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    if (failed(state, cudaMallocManaged(&p, bytes))) return;
    benchmark::DoNotOptimize(p);
    if (failed(state, cudaFree(p))) return;
  }
}

void BM_cuda_malloc_async_free(benchmark::State& state) {
  if (no_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  cudaStream_t s = nullptr;
  if (failed(state, cudaStreamCreate(&s))) return;
  for (auto _ : state) {
    void* p = nullptr;
    if (failed(state, cudaMallocAsync(&p, bytes, s))) break;
    benchmark::DoNotOptimize(p);
    if (failed(state, cudaFreeAsync(p, s))) break;
  }
  (void)cudaStreamSynchronize(s);
  (void)cudaStreamDestroy(s);
}

__global__ void kernel_touch(float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    x[i] += 1.0f;
}

cudaError_t prefetch_to_device(const void* p, std::size_t bytes, cudaStream_t s) {
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = dev;
  return cudaMemPrefetchAsync(p, bytes, where, 0, s);
#else
  return cudaMemPrefetchAsync(p, bytes, dev, s);
#endif
}

// kernel time on managed memory last written by the host: range(1) = 1 prefetches
// the pages to the device first (the prefetch is inside the timed region)
void BM_first_touch_kernel(benchmark::State& state) {
  if (no_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const bool prefetch = state.range(1) != 0;
  const std::size_t n = bytes / sizeof(float);
  float* x = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (failed(state, cudaMallocManaged(&x, bytes)) || failed(state, cudaStreamCreate(&s)) ||
      failed(state, cudaEventCreate(&start)) || failed(state, cudaEventCreate(&stop)))
    return;
  for (auto _ : state) {
    std::memset(x, 0, bytes);  // pages back on the host
    (void)cudaEventRecord(start, s);
    if (prefetch && failed(state, prefetch_to_device(x, bytes, s))) break;
    kernel_touch<<<1024, 256, 0, s>>>(x, n);
    if (failed(state, cudaPeekAtLastError())) break;
    (void)cudaEventRecord(stop, s);
    if (failed(state, cudaEventSynchronize(stop))) break;
    float ms = 0;
    (void)cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<long>(bytes));
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  (void)cudaStreamDestroy(s);
  (void)cudaFree(x);
}

// the same kernel on resident pages (the floor)
void BM_resident_kernel(benchmark::State& state) {
  if (no_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / sizeof(float);
  float* x = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (failed(state, cudaMallocManaged(&x, bytes)) || failed(state, cudaStreamCreate(&s)) ||
      failed(state, cudaEventCreate(&start)) || failed(state, cudaEventCreate(&stop)) ||
      failed(state, prefetch_to_device(x, bytes, s)))
    return;
  for (auto _ : state) {
    (void)cudaEventRecord(start, s);
    kernel_touch<<<1024, 256, 0, s>>>(x, n);
    if (failed(state, cudaPeekAtLastError())) break;
    (void)cudaEventRecord(stop, s);
    if (failed(state, cudaEventSynchronize(stop))) break;
    float ms = 0;
    (void)cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<long>(bytes));
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  (void)cudaStreamDestroy(s);
  (void)cudaFree(x);
}

}  // namespace

void marg_bench_register_cuda() {
  benchmark::RegisterBenchmark("BM_cuda_malloc_managed_free", BM_cuda_malloc_managed_free)
      ->Apply(size_args);
  benchmark::RegisterBenchmark("BM_cuda_malloc_async_free", BM_cuda_malloc_async_free)
      ->Apply(size_args);
  for (long bytes : {1l << 20, 8l << 20, 64l << 20}) {
    for (long pf : {0l, 1l})
      benchmark::RegisterBenchmark("BM_first_touch_kernel", BM_first_touch_kernel)
          ->Args({bytes, pf})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("BM_resident_kernel", BM_resident_kernel)
        ->Arg(bytes)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}
