// CUDA benchmark: libmarg's banded-product kernels beside the published
// baselines (blog v0/v3/v4 at block sizes 128/256/512, cuFFT) on the same GPU.
// Every benchmark reports the median time of one launch (bursts of launches
// timed with events, inputs rotated over several buffer sets), GFLOP/s
// (2 m n per product), the share of the FMA ceiling measured by the
// fma_ceiling benchmarks (which run first), and the max relative error of
// its output against a long double reference. scripts/gpu-check turns the
// JSON output into the summary table.
#include <marg/marg.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "baselines.cuh"
#include "bench_common.hpp"
#include "cuda/kernels/tiled.cuh"
#include "cuda/launch.hpp"

namespace {

using marg::detail::banded_args;
using marg::detail::banded_op;

#define BENCH_CUDA(call)                                                               \
  do {                                                                                 \
    const cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

cudaStream_t g_stream = nullptr;
double g_ceiling[2] = {0, 0};  // FMA ceilings in GFLOP/s: float, double

// ---- FMA ceiling: independent FMA chains per thread, the whole GPU busy ----
template <class T>
__global__ void kernel_fma_loop(int iters, T* sink) {
  T x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = T(threadIdx.x + c) * T(1e-3);
  const T a = T(0.999999), b = T(1e-7);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);
  }
  T s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == T(-1)) *sink = s;  // never true; keeps the chains alive
}

template <class T>
void BM_fma_ceiling(benchmark::State& state) {
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  T* sink = nullptr;
  BENCH_CUDA(cudaMalloc(&sink, sizeof(T)));
  const int iters = 1 << 14, blocks = sms * 8, threads = 256;
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  kernel_fma_loop<T><<<blocks, threads, 0, g_stream>>>(iters, sink);
  std::vector<double> samples;
  for (auto _ : state) {
    BENCH_CUDA(cudaEventRecord(e0, g_stream));
    kernel_fma_loop<T><<<blocks, threads, 0, g_stream>>>(iters, sink);
    BENCH_CUDA(cudaEventRecord(e1, g_stream));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    samples.push_back(ms * 1e-3);
    state.SetIterationTime(ms * 1e-3);
  }
  std::sort(samples.begin(), samples.end());
  const double t = samples[samples.size() / 2];
  const double gflops = 2.0 * 8 * iters * double(blocks) * threads / t * 1e-9;
  g_ceiling[sizeof(T) == 8] = gflops;
  state.counters["us"] = t * 1e6;
  state.counters["GFLOPs"] = gflops;
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  BENCH_CUDA(cudaFree(sink));
}

// ---- one benchmark case: device buffer sets and a reference for set 0 ----
template <class T>
struct case_data {
  banded_op op;
  int m, n, batch;
  bool broadcast_b;  // stride 0 for operand b: one operand for every problem
  std::int64_t la, lb, lout;
  int sets;
  std::vector<T*> a, b, out;
  std::vector<long double> ref;  // set 0, all problems
  std::vector<T> host_a, host_b;
};

template <class T>
case_data<T>& get_case(banded_op op, int m, int n, int batch, bool broadcast_b) {
  static std::map<std::tuple<int, int, int, int, bool>, std::unique_ptr<case_data<T>>> cache;
  auto& slot = cache[{static_cast<int>(op), m, n, batch, broadcast_b}];
  if (slot) return *slot;
  slot = std::make_unique<case_data<T>>();
  case_data<T>& c = *slot;
  c.op = op, c.m = m, c.n = n, c.batch = batch, c.broadcast_b = broadcast_b;
  const auto len = marg::detail::lengths_of(op, m, n);
  c.la = len.a, c.lb = len.b, c.lout = len.out;
  const std::int64_t nb = broadcast_b ? 1 : batch;
  const double set_bytes = double(sizeof(T)) * (c.la * batch + c.lb * nb + c.lout * batch);
  // rotate buffer sets so that repeated launches do not all hit the L2 cache
  c.sets = static_cast<int>(std::clamp(128e6 / set_bytes, 1.0, 8.0));
  for (int s = 0; s < c.sets; ++s) {
    const auto ha = marg::bench::random_positive<T>(c.la * batch, 11 + 7 * s);
    const auto hb = marg::bench::random_positive<T>(c.lb * nb, 12 + 7 * s);
    T *da, *db, *dout;
    BENCH_CUDA(cudaMalloc(&da, ha.size() * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&db, hb.size() * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&dout, c.lout * batch * sizeof(T)));
    BENCH_CUDA(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
    c.a.push_back(da), c.b.push_back(db), c.out.push_back(dout);
    if (s == 0) c.host_a = ha, c.host_b = hb;
  }
  c.ref.resize(static_cast<std::size_t>(c.lout * batch));
  if (batch == 1) {
    c.ref = marg::bench::reference_parallel(op, m, n, c.host_a.data(), c.host_b.data());
  } else {
    const int nt = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 0; t < nt; ++t)
      pool.emplace_back([&, t] {
        for (int i = t; i < batch; i += nt) {
          const auto r = marg::bench::reference_one(op, m, n, c.host_a.data() + i * c.la,
                                                    c.host_b.data() + (broadcast_b ? 0 : i * c.lb));
          std::copy(r.begin(), r.end(), c.ref.begin() + i * c.lout);
        }
      });
    for (auto& th : pool) th.join();
  }
  return c;
}

template <class T>
banded_args<T> args_of(const case_data<T>& c, int s) {
  return {c.op,     c.m, c.n,    c.a[s], 1, c.la, c.b[s], 1, c.broadcast_b ? 0 : c.lb,
          c.out[s], 1,   c.lout, c.batch};
}

// median seconds per call of `launch(set)` over samples of bursts (sets
// rotate so that repeated launches do not all hit the L2 cache)
struct burst_timing {
  double seconds;
  int burst;
};

template <class Launch>
burst_timing time_bursts(benchmark::State& state, int sets, Launch launch, int calls = 1) {
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  int next = 0;
  // ms of one burst of n launches, rotating over the buffer sets
  const auto burst_ms = [&](int n) {
    BENCH_CUDA(cudaEventRecord(e0, g_stream));
    for (int i = 0; i < n; ++i) launch(next++ % sets);
    BENCH_CUDA(cudaEventRecord(e1, g_stream));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms);
  };
  // warm-up: a few ms of launches, so that module loading and the clock
  // state left by the previous benchmark stay out of the samples
  burst_ms(3);
  const double warm_ms = burst_ms(3) / 3;
  burst_ms(static_cast<int>(std::clamp(3.0 / (warm_ms + 1e-6), 1.0, 2000.0)));
  // bursts of at least ~200 us so that event resolution does not matter
  const double one_ms = burst_ms(3) / 3;
  const int burst = static_cast<int>(std::clamp(0.2 / (one_ms + 1e-6), 1.0, 1000.0));
  std::vector<double> samples;
  for (auto _ : state) {
    const double s = burst_ms(burst) * 1e-3 / burst / calls;  // per call
    samples.push_back(s);
    state.SetIterationTime(s);
  }
  std::sort(samples.begin(), samples.end());
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  return {samples[samples.size() / 2], burst};
}

// times `launch(set)` (time_bursts), checks set 0's output; sets the counters
template <class T, class Launch>
void time_and_check(benchmark::State& state, case_data<T>& c, Launch launch, int calls = 1) {
  const burst_timing timing = time_bursts(state, c.sets, launch, calls);
  const double t = timing.seconds;
  const int burst = timing.burst;
  // correctness of the timed code: poison the output (NaN), run on set 0, compare
  BENCH_CUDA(cudaMemsetAsync(c.out[0], 0xff, c.lout * c.batch * sizeof(T), g_stream));
  launch(0);
  std::vector<T> host(static_cast<std::size_t>(c.lout * c.batch));
  BENCH_CUDA(cudaMemcpyAsync(host.data(), c.out[0], host.size() * sizeof(T), cudaMemcpyDeviceToHost,
                             g_stream));
  BENCH_CUDA(cudaStreamSynchronize(g_stream));
  std::int64_t negatives = 0;
  const double err =
      marg::bench::max_rel_error(host.data(), c.ref.data(), c.lout * c.batch, 1, &negatives);
  const double flops = 2.0 * c.m * c.n * c.batch;
  state.counters["us"] = t * 1e6;
  state.counters["GFLOPs"] = flops / t * 1e-9;
  const double ceiling = g_ceiling[sizeof(T) == 8];
  state.counters["pct_ceiling"] = ceiling > 0 ? 100.0 * flops / t * 1e-9 / ceiling : 0.0;
  state.counters["max_rel_err"] = err;
  state.counters["negatives"] = static_cast<double>(negatives);
  state.counters["burst"] = burst;
}

template <class T>
void BM_marg(benchmark::State& state, banded_op op, int m, int n, int batch, bool bcast) {
  case_data<T>& c = get_case<T>(op, m, n, batch, bcast);
  time_and_check(state, c,
                 [&](int s) { marg::detail::cuda::launch_banded(args_of(c, s), g_stream); });
}

// the public API recorded by marg::capture_calls: one graph replay runs
// `calls` products (rotating over the buffer sets); time per product
template <class T>
void BM_graph(benchmark::State& state, banded_op op, int m, int n, int batch, int calls) {
  case_data<T>& c = get_case<T>(op, m, n, batch, false);
  const marg::stream_view sv{static_cast<void*>(g_stream)};
  std::vector<marg::call_graph> graphs;  // graph s starts at set s
  try {
    for (int first = 0; first < c.sets; ++first)
      graphs.push_back(marg::capture_calls(sv, [&] {
        for (int i = 0; i < calls; ++i) {
          const banded_args<T> x = args_of(c, (first + i) % c.sets);
          if (op == banded_op::convolve)
            marg::convolve_batched<T>(m, n, x.a, 1, x.stride_a, x.b, 1, x.stride_b, x.out, 1,
                                      x.stride_out, batch, sv);
          else
            marg::convolve_grad_p_batched<T>(m, n, x.a, 1, x.stride_a, x.b, 1, x.stride_b, x.out, 1,
                                             x.stride_out, batch, sv);
        }
      }));
  } catch (const std::exception& e) {  // a call that cannot be recorded: a row says why
    state.SkipWithError(e.what());
    return;
  }
  state.counters["calls"] = calls;
  time_and_check(
      state, c, [&](int s) { graphs[static_cast<std::size_t>(s)].replay(sv); }, calls);
}

// one kernel variant forced, to tune the dispatch thresholds
template <class T>
void BM_variant(benchmark::State& state, marg::detail::cuda::kernel_variant v, banded_op op, int m,
                int n, int batch) {
  case_data<T>& c = get_case<T>(op, m, n, batch, false);
  const auto corr = marg::detail::cuda::correlation_of(args_of(c, 0));
  if (!marg::detail::cuda::variant_supports(v, corr)) {
    state.SkipWithError("the variant does not support these operands");
    return;
  }
  const int split = marg::detail::cuda::tap_split_of(v, corr);
  state.counters["split"] = split;
  time_and_check(state, c, [&](int s) {
    marg::detail::cuda::launch_variant(v, marg::detail::cuda::correlation_of(args_of(c, s)), split,
                                       g_stream);
  });
}

// a tile shape outside the library's tunings (kernels/tiled.cuh), with the
// library's tap-split rule: candidates for the next dispatch
template <class T, class C>
void BM_tuning(benchmark::State& state, banded_op op, int m, int n, int batch) {
  case_data<T>& c = get_case<T>(op, m, n, batch, false);
  const auto corr = marg::detail::cuda::correlation_of(args_of(c, 0));
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::int64_t tiles = (std::int64_t{corr.lout} + C::TJ - 1) / C::TJ * corr.batch;
  const std::int64_t taps = std::min<std::int64_t>(corr.la, std::int64_t{C::TJ} + corr.lx - 1);
  const std::int64_t stages = (taps + C::KC - 1) / C::KC;
  const int split = static_cast<int>(std::clamp<std::int64_t>(
      std::min<std::int64_t>((4 * sms + tiles - 1) / tiles, stages), 1, 8));
  state.counters["split"] = split;
  time_and_check(state, c, [&](int s) {
    marg::detail::cuda::launch_tiled<T, C>(marg::detail::cuda::correlation_of(args_of(c, s)), split,
                                           g_stream);
  });
}

template <class T, class C>
void register_tuning(const char* label, banded_op op, int m, int n, int batch, const char* size) {
  const std::string name = std::string("variant_") + label + "/" +
                           (op == banded_op::convolve ? "convolve" : "grad_p") + "/" +
                           (sizeof(T) == 4 ? "float" : "double") + "/" + size;
  benchmark::RegisterBenchmark(name.c_str(), BM_tuning<T, C>, op, m, n, batch)
      ->UseManualTime()
      ->Iterations(20)
      ->Unit(benchmark::kMicrosecond);
}

enum class blog { v0, v3, v4 };

template <class T>
void BM_blog(benchmark::State& state, blog v, int block, int m, int n) {
  case_data<T>& c = get_case<T>(banded_op::convolve, m, n, 1, false);
  time_and_check(state, c, [&](int s) {
    if (v == blog::v0) marg::bench::blog_v0(m, n, c.a[s], c.b[s], c.out[s], block, g_stream);
    if (v == blog::v3) marg::bench::blog_v3(m, n, c.a[s], c.b[s], c.out[s], block, g_stream);
    if (v == blog::v4) marg::bench::blog_v4(m, n, c.a[s], c.b[s], c.out[s], block, g_stream);
  });
}

template <class T>
void BM_cufft(benchmark::State& state, int m, int n) {
  case_data<T>& c = get_case<T>(banded_op::convolve, m, n, 1, false);
  marg::bench::fft_convolver<T> fft(m, n, g_stream);
  time_and_check(state, c, [&](int s) { fft.run(c.a[s], c.b[s], c.out[s]); });
}

const char* op_name(banded_op op) {
  return op == banded_op::convolve ? "convolve" : op == banded_op::grad_p ? "grad_p" : "grad_q";
}

template <class T>
void register_type(const char* tname) {
  const banded_op ops[] = {banded_op::convolve, banded_op::grad_p, banded_op::grad_q};
  struct shape {
    int m, n, batch;
    bool bcast;
    const char* label;
  };
  const shape shapes[] = {{2048, 2048, 1, false, "2048"},
                          {65536, 65536, 1, false, "65536"},
                          {64, 64, 16384, false, "16384x64"},
                          {512, 512, 4096, false, "4096x512"},
                          {64, 64, 16384, true, "16384x64_bcast"},
                          {1000, 3, 1, false, "1000x3"},
                          {128, 32, 8192, false, "8192x128x32"},
                          // a batch that fills the pairs kernel's persistent rounds only partly
                          // (pairs_tuning::full_pct: one problem per warp there)
                          {512, 512, 3000, false, "3000x512"},
                          // grad_q of 3 output blocks: the lane dispatch's run_x path on the
                          // tensor-copy kernel (lane_preferred, Teams 2)
                          {128, 48, 8192, false, "8192x128x48"}};
  for (const auto& s : shapes)
    for (const banded_op op : ops) {
      if (s.bcast && op != banded_op::convolve) continue;
      const std::string name = std::string("marg/") + op_name(op) + "/" + tname + "/" + s.label;
      benchmark::RegisterBenchmark(name.c_str(), BM_marg<T>, op, s.m, s.n, s.batch, s.bcast)
          ->UseManualTime()
          ->Iterations(40)
          ->Unit(benchmark::kMicrosecond);
    }
  // graphs of 20 calls: the per-call floor without the host's launch cost
  for (const auto& s : {shapes[0], shapes[1], shapes[2], shapes[5]})
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p}) {
      const std::string name = std::string("graph20/") + op_name(op) + "/" + tname + "/" + s.label;
      benchmark::RegisterBenchmark(name.c_str(), BM_graph<T>, op, s.m, s.n, s.batch, 20)
          ->UseManualTime()
          ->Iterations(40)
          ->Unit(benchmark::kMicrosecond);
    }
  using marg::detail::cuda::kernel_variant;
  for (const auto& s : {shapes[0], shapes[1], shapes[2], shapes[3], shapes[6]})
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p})
      for (const kernel_variant v : marg::detail::cuda::all_variants) {
        if (v == kernel_variant::warp && s.batch == 1) continue;
        // 65536: only the variants made for it (the others take milliseconds)
        if (s.m == 65536 && v != kernel_variant::large && v != kernel_variant::mma &&
            v != kernel_variant::wgmma)
          continue;
        // shape-only probe (null pointers); BM_variant checks the real operands
        const marg::detail::banded_args<T> probe{op, s.m, s.n,     nullptr, 1, 0,      nullptr,
                                                 1,  0,   nullptr, 1,       0, s.batch};
        if (!marg::detail::cuda::variant_supports(v, marg::detail::cuda::correlation_of(probe)))
          continue;
        const std::string name = std::string("variant_") + marg::detail::cuda::variant_name(v) +
                                 "/" + op_name(op) + "/" + tname + "/" + s.label;
        benchmark::RegisterBenchmark(name.c_str(), BM_variant<T>, v, op, s.m, s.n, s.batch)
            ->UseManualTime()
            ->Iterations(20)
            ->Unit(benchmark::kMicrosecond);
      }
  for (const int size : {2048, 65536}) {
    for (const auto& [v, vname] : {std::pair{blog::v0, "v0"}, {blog::v3, "v3"}, {blog::v4, "v4"}})
      for (const int block : {128, 256, 512}) {
        const std::string name = std::string("blog_") + vname + "_b" + std::to_string(block) +
                                 "/convolve/" + tname + "/" + std::to_string(size);
        benchmark::RegisterBenchmark(name.c_str(), BM_blog<T>, v, block, size, size)
            ->UseManualTime()
            ->Iterations(size > 10000 ? 10 : 40)
            ->Unit(benchmark::kMicrosecond);
      }
    const std::string name = std::string("cufft/convolve/") + tname + "/" + std::to_string(size);
    benchmark::RegisterBenchmark(name.c_str(), BM_cufft<T>, size, size)
        ->UseManualTime()
        ->Iterations(40)
        ->Unit(benchmark::kMicrosecond);
  }
}

// log_convolve_batched through the public API on device memory (log of set
// 0's operands), and beside it the public linear convolve_batched on set 0:
// the same buffers, the same stream, timed alike (time_bursts). The log
// row's error is the largest |log r - log ref| / max(1, |log ref|).
template <class T>
void BM_public(benchmark::State& state, int m, int n, int batch, bool log_space) {
  marg::set_backend(marg::backend::cuda);
  case_data<T>& c = get_case<T>(banded_op::convolve, m, n, batch, false);
  const std::int64_t la = c.la, lb = c.lb, lr = c.lout;
  static std::map<std::tuple<int, int, int>, std::pair<T*, T*>> logs;
  auto& lg = logs[{m, n, batch}];
  if (!lg.first) {
    std::vector<T> ha(c.host_a), hb(c.host_b);
    for (T& v : ha) v = std::log(v);
    for (T& v : hb) v = std::log(v);
    BENCH_CUDA(cudaMalloc(&lg.first, ha.size() * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&lg.second, hb.size() * sizeof(T)));
    BENCH_CUDA(cudaMemcpy(lg.first, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(lg.second, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  const marg::stream_view sv{static_cast<void*>(g_stream)};
  const auto launch = [&] {
    if (log_space)
      marg::log_convolve_batched<T>(m, n, lg.first, 1, la, lg.second, 1, lb, c.out[0], 1, lr, batch,
                                    sv);
    else
      marg::convolve_batched<T>(m, n, c.a[0], 1, la, c.b[0], 1, lb, c.out[0], 1, lr, batch, sv);
  };
  const burst_timing timing = time_bursts(state, 1, [&](int) { launch(); });
  BENCH_CUDA(cudaMemsetAsync(c.out[0], 0xff, lr * batch * sizeof(T), g_stream));
  launch();
  std::vector<T> host(static_cast<std::size_t>(lr * batch));
  BENCH_CUDA(cudaMemcpyAsync(host.data(), c.out[0], host.size() * sizeof(T), cudaMemcpyDeviceToHost,
                             g_stream));
  BENCH_CUDA(cudaStreamSynchronize(g_stream));
  double err = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const long double want = log_space ? std::log(c.ref[i]) : c.ref[i];
    const long double d = std::fabs(host[i] - want);
    err =
        std::max(err, static_cast<double>(log_space ? d / std::max<long double>(1, std::fabs(want))
                                                    : d / std::fabs(want)));
    if (std::isnan(static_cast<double>(host[i]))) err = INFINITY;
  }
  state.counters["us"] = timing.seconds * 1e6;
  state.counters["max_err"] = err;
}

template <class T>
void register_public(const char* tname) {
  struct shape {
    int m, n, batch;
    const char* label;
  };
  for (const shape& sh : {shape{65536, 65536, 1, "65536"}, shape{2048, 2048, 1, "2048"},
                          shape{64, 64, 16384, "16384x64"}, shape{512, 512, 4096, "4096x512"}})
    for (const bool log_space : {false, true}) {
      const std::string name = std::string(log_space ? "public_log" : "public_linear") +
                               "/convolve/" + tname + "/" + sh.label;
      benchmark::RegisterBenchmark(name.c_str(), BM_public<T>, sh.m, sh.n, sh.batch, log_space)
          ->UseManualTime()
          ->Iterations(20)
          ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace

// marg::sum of n Bernoulli pmfs (the Poisson-binomial) through the public
// API on the CUDA backend: the balanced tree of batched convolutions with its
// host orchestration, timed on the host (the result is read, so the work is
// done). Checked: total mass 1 and mean sum p_i in long double.
template <class T>
void BM_poisson_binomial(benchmark::State& state, int n) {
  marg::set_backend(marg::backend::cuda);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<marg::pmf<T>> terms;
  long double mean = 0;
  for (int i = 0; i < n; ++i) {
    const double p = u(rng);
    terms.push_back(marg::bernoulli<T>(p));
    mean += static_cast<T>(p);
  }
  (void)marg::sum(terms);  // warm-up: pool and kernels
  std::vector<double> times, sum_times;
  double err = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const marg::pmf<T> s = marg::sum(terms);
    const auto t1 = std::chrono::steady_clock::now();
    const std::vector<T> v = s.probs();  // a host copy: waits for the work
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(t);
    times.push_back(t);
    sum_times.push_back(std::chrono::duration<double>(t1 - t0).count());
    long double mass = 0, m1 = 0;
    for (std::int64_t k = 0; k < s.size(); ++k)
      mass += v[k], m1 += static_cast<long double>(s.lower() + k) * v[k];
    err = std::max({err, static_cast<double>(std::fabs(mass - 1)),
                    static_cast<double>(std::fabs(m1 - mean) / mean)});
  }
  std::sort(times.begin(), times.end());
  std::sort(sum_times.begin(), sum_times.end());
  state.counters["us"] = times[times.size() / 2] * 1e6;
  state.counters["max_us"] = times.back() * 1e6;
  state.counters["sum_us"] = sum_times[sum_times.size() / 2] * 1e6;  // marg::sum alone
  state.counters["mass_mean_err"] = err;
}

int main(int argc, char** argv) {
  BENCH_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  benchmark::RegisterBenchmark("fma_ceiling/float", BM_fma_ceiling<float>)
      ->UseManualTime()
      ->Iterations(20)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("fma_ceiling/double", BM_fma_ceiling<double>)
      ->UseManualTime()
      ->Iterations(20)
      ->Unit(benchmark::kMicrosecond);
  register_type<float>("float");
  register_type<double>("double");
  register_public<float>("float");
  register_public<double>("double");
  {
    using marg::detail::cuda::tiled_tuning;
    const auto conv = banded_op::convolve;
    // double 65536: register-block and occupancy alternatives to the large tile
    register_tuning<double, tiled_tuning<double, 8, 4, 4, 2, 256, 2>>("R8K4WJ4WK2", conv, 65536,
                                                                      65536, 1, "65536");
    // (the library's large double tile is R8 K8 WJ2 x WK4, 3 blocks/SM; a 2-block shape below)
    register_tuning<double, tiled_tuning<double, 16, 4, 2, 4, 256, 2>>("R16K4WJ2WK4", conv, 65536,
                                                                       65536, 1, "65536");
    register_tuning<double, tiled_tuning<double, 16, 4, 2, 2, 256, 3>>("R16K4WJ2WK2x3", conv, 65536,
                                                                       65536, 1, "65536");
    register_tuning<double, tiled_tuning<double, 16, 4, 4, 2, 256, 2>>("R16K4WJ4WK2", conv, 65536,
                                                                       65536, 1, "65536");
    // 4096 pairs of 512 (float convolve): R = 16 tiles beside mid (R 8) and
    // large (R 16, two output warps)
    for (const auto op : {conv, banded_op::grad_p})
      register_tuning<float, tiled_tuning<float, 16, 16, 1, 4, 512, 2>>("R16WJ1", op, 512, 512,
                                                                        4096, "4096x512");
  }
  for (const int n : {10000, 100000}) {
    const std::string name = "marg/poisson_binomial_sum/double/" + std::to_string(n);
    // 40 samples: single runs of the 100,000 sum spread over 4.7-5.8 ms
    benchmark::RegisterBenchmark(name.c_str(), BM_poisson_binomial<double>, n)
        ->UseManualTime()
        ->Iterations(40)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  benchmark::AddCustomContext("device", prop.name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
