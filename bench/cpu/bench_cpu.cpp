// CPU backend against a plain loop: the three banded products at m = n = 2048
// and 65536, float and double, one thread and all cores, plus batches of
// convolutions and gradients against the plain loop over the batch.
// The FLOP/s counter counts 2 m n operations per product (one multiply-add
// per non-zero band entry), the convention of docs/benchmarks.md. The BM_log
// rows run log_convolve on log-probabilities beside the linear rows.
#include <marg/marg.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace {

// random inputs: constant ones would let a kernel skip work unnoticed
template <class T>
std::vector<T> random_vector(std::int64_t size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(size));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

int all_cores() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["FLOP/s"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

// the baseline: one dot product per output, as numpy.convolve does
template <class T>
void plain_convolve(int m, int n, const T* p, const T* q, T* r) {
  for (int i = 0; i < m + n - 1; ++i) {
    const int lo = i < n ? 0 : i - n + 1, hi = i < m ? i : m - 1;
    T acc = 0;
    for (int j = lo; j <= hi; ++j) acc += p[j] * q[i - j];
    r[i] = acc;
  }
}

template <class T>
void BM_plain_loop(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto p = random_vector<T>(n, 1), q = random_vector<T>(n, 2);
  std::vector<T> r(2 * static_cast<std::size_t>(n) - 1);
  for (auto _ : state) {
    plain_convolve(n, n, p.data(), q.data(), r.data());
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n);
}

enum class product { convolve, grad_p, grad_q };

// one product of size m = n = range(0) on range(1) host threads
template <class T, product P>
void BM_marg(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(static_cast<int>(state.range(1)));
  // p, q: operands of length n; g: gradient over the sum, length 2n - 1
  const auto p = random_vector<T>(n, 1), q = random_vector<T>(n, 2);
  const auto g = random_vector<T>(2 * n - 1, 3);
  std::vector<T> out(2 * static_cast<std::size_t>(n) - 1);
  for (auto _ : state) {
    if constexpr (P == product::convolve)
      marg::convolve<T>(n, n, p.data(), 1, q.data(), 1, out.data(), 1);
    else if constexpr (P == product::grad_p)
      marg::convolve_grad_p<T>(n, n, g.data(), 1, q.data(), 1, out.data(), 1);
    else
      marg::convolve_grad_q<T>(n, n, g.data(), 1, p.data(), 1, out.data(), 1);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n);
}

// the baseline for batches: the plain loop over every problem, one thread
template <class T>
void BM_plain_batched(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const std::int64_t len_r = 2 * std::int64_t{n} - 1;
  const auto p = random_vector<T>(std::int64_t{batch} * n, 1);
  const auto q = random_vector<T>(std::int64_t{batch} * n, 2);
  std::vector<T> r(static_cast<std::size_t>(batch * len_r));
  for (auto _ : state) {
    for (std::int64_t i = 0; i < batch; ++i)
      plain_convolve(n, n, p.data() + i * n, q.data() + i * n, r.data() + i * len_r);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * batch);
}

// range(0) problems of size m = n = range(1) in one call, on range(2) threads
template <class T, product P>
void BM_marg_batched(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(static_cast<int>(state.range(2)));
  const std::int64_t len_r = 2 * std::int64_t{n} - 1;
  const auto p = random_vector<T>(std::int64_t{batch} * n, 1);
  const auto q = random_vector<T>(std::int64_t{batch} * n, 2);
  const auto g = random_vector<T>(std::int64_t{batch} * len_r, 3);
  std::vector<T> r(static_cast<std::size_t>(batch * len_r));
  for (auto _ : state) {
    if constexpr (P == product::convolve)
      marg::convolve_batched<T>(n, n, p.data(), 1, n, q.data(), 1, n, r.data(), 1, len_r, batch);
    else  // the gradient over p of every problem: n outputs each
      marg::convolve_grad_p_batched<T>(n, n, g.data(), 1, len_r, q.data(), 1, n, r.data(), 1, n,
                                       batch);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * batch);
}

// log-probabilities of random weights: one window each (float and double),
// so the log-space product is one linear product plus the scaling passes
template <class T>
std::vector<T> random_logs(std::int64_t size, unsigned seed) {
  auto v = random_vector<T>(size, seed);
  for (auto& x : v) x = static_cast<T>(std::log(static_cast<double>(x)));
  return v;
}

// log_convolve of size m = n = range(0) on range(1) host threads, beside
// BM_marg's convolve rows
template <class T>
void BM_log(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(static_cast<int>(state.range(1)));
  const auto a = random_logs<T>(n, 1), b = random_logs<T>(n, 2);
  std::vector<T> r(2 * static_cast<std::size_t>(n) - 1);
  for (auto _ : state) {
    marg::log_convolve<T>(n, n, a.data(), 1, b.data(), 1, r.data(), 1);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n);
}

// log_convolve of Binomial(n - 1, 1/2) with itself: probabilities down to
// 2^-(n-1), far below T's range, so the operands are cut into many windows
template <class T>
void BM_log_wide(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(static_cast<int>(state.range(1)));
  std::vector<T> a(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k)
    a[k] = static_cast<T>(std::lgamma(n) - std::lgamma(k + 1.0) - std::lgamma(n - k + 0.0) -
                          (n - 1) * std::log(2.0));
  std::vector<T> r(2 * static_cast<std::size_t>(n) - 1);
  for (auto _ : state) {
    marg::log_convolve<T>(n, n, a.data(), 1, a.data(), 1, r.data(), 1);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n);
}

// range(0) log-space problems of size m = n = range(1) in one call
template <class T>
void BM_log_batched(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(static_cast<int>(state.range(2)));
  const std::int64_t len_r = 2 * std::int64_t{n} - 1;
  const auto a = random_logs<T>(std::int64_t{batch} * n, 1);
  const auto b = random_logs<T>(std::int64_t{batch} * n, 2);
  std::vector<T> r(static_cast<std::size_t>(batch * len_r));
  for (auto _ : state) {
    marg::log_convolve_batched<T>(n, n, a.data(), 1, n, b.data(), 1, n, r.data(), 1, len_r, batch);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * batch);
}

void sizes_and_threads(benchmark::internal::Benchmark* b, std::vector<int> sizes) {
  b->ArgNames({"n", "threads"});
  for (int n : sizes) {
    b->Args({n, 1});
    if (all_cores() > 1) b->Args({n, all_cores()});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void forward_args(benchmark::internal::Benchmark* b) {
  sizes_and_threads(b, {2048, 65536});
}
void grad_args(benchmark::internal::Benchmark* b) {
  sizes_and_threads(b, {65536});
}
void wide_args(benchmark::internal::Benchmark* b) {
  sizes_and_threads(b, {4096});
}

// (batch, n) of the batched rows; 65536 x 6: a batch of particles adding two
// dice (few outcomes, fixed cost per problem)
constexpr std::pair<int, int> batched_shapes[] = {{16384, 64}, {4096, 512}, {65536, 6}};

void batched_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "n", "threads"});
  for (const auto& [batch, n] : batched_shapes) {
    b->Args({batch, n, 1});
    if (all_cores() > 1) b->Args({batch, n, all_cores()});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void plain_batched_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "n"});
  for (const auto& [batch, n] : batched_shapes) b->Args({batch, n});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_plain_loop, float)->Arg(2048)->ArgName("n")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_plain_loop, double)->Arg(2048)->ArgName("n")->Unit(benchmark::kMillisecond);
// about 10 s per call at 65536: one iteration is enough
BENCHMARK_TEMPLATE(BM_plain_loop, float)
    ->Arg(65536)
    ->ArgName("n")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_plain_loop, double)
    ->Arg(65536)
    ->ArgName("n")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_TEMPLATE(BM_marg, float, product::convolve)->Apply(forward_args);
BENCHMARK_TEMPLATE(BM_marg, double, product::convolve)->Apply(forward_args);
BENCHMARK_TEMPLATE(BM_marg, float, product::grad_p)->Apply(grad_args);
BENCHMARK_TEMPLATE(BM_marg, double, product::grad_p)->Apply(grad_args);
BENCHMARK_TEMPLATE(BM_marg, float, product::grad_q)->Apply(grad_args);
BENCHMARK_TEMPLATE(BM_marg, double, product::grad_q)->Apply(grad_args);
BENCHMARK_TEMPLATE(BM_plain_batched, float)->Apply(plain_batched_args);
BENCHMARK_TEMPLATE(BM_plain_batched, double)->Apply(plain_batched_args);
BENCHMARK_TEMPLATE(BM_marg_batched, float, product::convolve)->Apply(batched_args);
BENCHMARK_TEMPLATE(BM_marg_batched, double, product::convolve)->Apply(batched_args);
BENCHMARK_TEMPLATE(BM_marg_batched, float, product::grad_p)->Apply(batched_args);
BENCHMARK_TEMPLATE(BM_marg_batched, double, product::grad_p)->Apply(batched_args);

BENCHMARK_TEMPLATE(BM_log, float)->Apply(forward_args);
BENCHMARK_TEMPLATE(BM_log, double)->Apply(forward_args);
BENCHMARK_TEMPLATE(BM_log_wide, float)->Apply(wide_args);
BENCHMARK_TEMPLATE(BM_log_wide, double)->Apply(wide_args);
BENCHMARK_TEMPLATE(BM_log_batched, float)->Apply(batched_args);
BENCHMARK_TEMPLATE(BM_log_batched, double)->Apply(batched_args);

BENCHMARK_MAIN();
