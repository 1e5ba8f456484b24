// CPU backend: the thread count changes the speed, not the results. Each case
// runs with 1, 2 and 3 host threads (3 splits the work unevenly on 2 cores):
// results must agree bitwise (the CPU backend cuts work into fixed chunks
// whatever the thread count), and every output is checked against the long
// double loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

// the CPU paths that use threads: one big problem split by output blocks
// (m * n >= 2^20) or by register tiles (convolutions up to 2^23, short
// outputs of many taps), many small problems split by problem (among them
// few-tap ones on the stack path), few mid-sized ones
struct threaded_case {
  int m, n, batch;
};
const threaded_case threaded_cases[] = {{1500, 1500, 1}, {3001, 700, 1},  {700, 3001, 1},
                                        {50, 50, 1000},  {1, 37, 20000},  {300, 299, 7},
                                        {100000, 40, 1}, {40, 100000, 1}, {6, 9, 30000}};

// elements whose bits differ, and the largest relative difference
struct bit_difference {
  std::int64_t count = 0;
  double worst = 0;
};

template <class T>
bit_difference differences(const std::vector<T>& x, const std::vector<T>& y) {
  bit_difference d;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(T)) != 0) {
      ++d.count;
      d.worst = std::max(d.worst, static_cast<double>(relative_error(y[i], x[i])));
    }
  return d;
}

}  // namespace

TEMPLATE_TEST_CASE("threads: 1 or 2 or 3 CPU threads give the same results", "[numeric]",
                   marg::test::cpu_f, marg::test::cpu_d) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const op o : all_ops) {
    for (const auto& c : threaded_cases) {
      INFO(name_of(o) << " m = " << c.m << " n = " << c.n << " batch = " << c.batch);
      const lengths len = lengths_of(o, c.m, c.n);
      std::vector<std::vector<T>> va, vb;
      std::vector<T> a, b;
      for (int k = 0; k < c.batch; ++k) {
        va.push_back(random_positive<T>(g, len.a, all_shapes[k % 4]));
        vb.push_back(random_positive<T>(g, len.b, shape::bell));
        a.insert(a.end(), va.back().begin(), va.back().end());
        b.insert(b.end(), vb.back().begin(), vb.back().end());
      }
      std::vector<std::vector<T>> outs;
      for (const int threads : {1, 2, 3}) {
        threads_guard guard(threads);
        REQUIRE(marg::cpu_threads() == threads);
        std::vector<T> out(static_cast<std::size_t>(len.out * c.batch), strided<T>::poison());
        call_batched<T>(o, c.m, c.n, a.data(), 1, len.a, b.data(), 1, len.b, out.data(), 1, len.out,
                        c.batch);
        outs.push_back(std::move(out));
      }
      const bit_difference d2 = differences(outs[0], outs[1]), d3 = differences(outs[0], outs[2]);
      INFO("2 threads: " << d2.count << " elements differ from 1 thread, by up to " << d2.worst);
      INFO("3 threads: " << d3.count << " elements differ from 1 thread, by up to " << d3.worst);
      CHECK(d2.count == 0);
      CHECK(d3.count == 0);
      for (int k = 0; k < std::min(c.batch, 3); ++k) {
        const rvec want = reference(o, c.m, c.n, widen(va[k]), widen(vb[k]));
        for (std::size_t t = 0; t < outs.size(); ++t) {
          const std::vector<T> got(outs[t].begin() + k * len.out,
                                   outs[t].begin() + (k + 1) * len.out);
          const error_report rep = compare(got, want, tolerance<T>());
          INFO(t + 1 << " threads, problem " << k << ": " << rep.describe());
          CHECK(rep.failures == 0);
        }
      }
    }
  }
}

TEST_CASE("threads: set_cpu_threads sets what cpu_threads returns", "[numeric]") {
  const int before = marg::cpu_threads();
  CHECK(before >= 1);
  {
    threads_guard one(1);
    CHECK(marg::cpu_threads() == 1);
    threads_guard many(64);  // more threads than cores is allowed
    CHECK(marg::cpu_threads() == 64);
  }
  CHECK(marg::cpu_threads() == before);
}

TEST_CASE("backend: automatic resolves to cuda exactly when a GPU is usable", "[numeric]") {
  const marg::backend before = marg::requested_backend();
  {
    backend_guard automatic(marg::backend::automatic);
    CHECK(marg::requested_backend() == marg::backend::automatic);
    CHECK(marg::current_backend() ==
          (marg::device_count() > 0 ? marg::backend::cuda : marg::backend::cpu));
    if (!marg::cuda_compiled()) CHECK(marg::device_count() == 0);
    backend_guard cpu(marg::backend::cpu);
    CHECK(marg::requested_backend() == marg::backend::cpu);
    CHECK(marg::current_backend() == marg::backend::cpu);
  }
  CHECK(marg::requested_backend() == before);
}

TEMPLATE_TEST_CASE("threads: several host threads call at once", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // each caller has its own scratch (CPU) and its own default stream (CUDA):
  // concurrent calls on different data must not interfere
  const int callers = 4;
  std::vector<problem> problems;
  std::vector<rng> engines;
  for (int t = 0; t < callers; ++t) {
    problem pr{all_ops[t % 3], random_size(g, 400), random_size(g, 400)};
    randomize_incs(g, pr);
    pr.mem = t % 2 ? memory::pool : memory::host;
    problems.push_back(pr);
    engines.emplace_back(g());
  }
  std::vector<error_report> reports(callers);
  std::vector<std::int64_t> strays(callers, -1);
  std::vector<std::string> errors(callers);
  std::vector<std::thread> pool;
  for (int t = 0; t < callers; ++t)
    pool.emplace_back([&, t] {
      // Catch assertions are not thread-safe: measure here, check below
      try {
        const problem& pr = problems[t];
        const lengths len = lengths_of(pr.o, pr.m, pr.n);
        strided<T> a(pr.mem, len.a, pr.inca, 0, 1), b(pr.mem, len.b, pr.incb, 0, 1);
        strided<T> out(pr.mem, len.out, pr.incout, 0, 1);
        error_report worst;
        for (int round = 0; round < 20; ++round) {
          const std::vector<T> va = random_positive<T>(engines[t], len.a, shape::bell);
          const std::vector<T> vb = random_positive<T>(engines[t], len.b, shape::uniform);
          a.set(0, va);
          b.set(0, vb);
          call<T>(pr.o, pr.m, pr.n, a.data(), a.inc(), b.data(), b.inc(), out.data(), out.inc());
          const error_report rep = compare(
              out.get(0), reference(pr.o, pr.m, pr.n, widen(va), widen(vb)), tolerance<T>());
          if (rep.failures > 0 || round == 0) worst = rep;
        }
        reports[t] = worst;
        strays[t] = out.stray_writes();
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < callers; ++t) {
    INFO("caller " << t << ": " << problems[t].describe() << ": " << reports[t].describe());
    CHECK(errors[t] == "");
    CHECK(reports[t].failures == 0);
    CHECK(strays[t] == 0);
  }
}
