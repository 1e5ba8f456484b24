// 8 host threads run a fixed mix of operations at once (allocate, convolve,
// sum, condition, sample) on both backends; every result is checked against
// a long double loop. Unlike tests/numeric/test_threads.cpp (4 callers of
// the banded products only) the threads here also share pmfs whose lazily
// built cumulative tables they race to build, and mix pool allocation with
// the CPU backend's own worker threads (set_cpu_threads(2)). This is the
// test the TSan build runs.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "reliability_fixture.hpp"

using namespace marg::test;
using namespace marg::test::rel;

namespace {

constexpr int n_threads = 8;
constexpr int iterations = 30;  // per thread: 6 rounds of the 5 operations

template <class T>
std::string fail_at(int t, int it, const char* what, const std::string& detail) {
  std::ostringstream s;
  s << "thread " << t << " iteration " << it << " " << what << ": " << detail;
  return s.str();
}

template <class T>
marg::pmf<T> random_pmf(rng& g, int len, std::int64_t lower) {
  return marg::categorical<T>(random_positive<T>(g, len, shape::uniform), lower);
}

// allocate: pool arrays of random sizes keep their contents while other
// threads allocate and free
template <class T>
void op_allocate(rng& g, int t, int it, failures& f) {
  std::vector<marg::array<T>> live;
  for (int k = 0; k < 8; ++k) {
    const auto len = static_cast<std::size_t>(uniform_int(g, 1, k % 4 == 0 ? 100000 : 500));
    live.emplace_back(len);
    T* d = live.back().data();
    for (std::size_t i = 0; i < len; ++i) d[i] = static_cast<T>((i * 7 + t * 13 + k) % 1024);
  }
  std::this_thread::yield();
  for (std::size_t k = 0; k < live.size(); ++k) {
    const T* d = live[k].data();
    for (std::size_t i = 0; i < live[k].size(); ++i)
      if (d[i] != static_cast<T>((i * 7 + t * 13 + k) % 1024)) {
        f.add(fail_at<T>(
            t, it, "allocate",
            "block " + std::to_string(k) + " element " + std::to_string(i) + " changed"));
        return;
      }
  }
}

// convolve: one banded product on host or pool operands with strides 1..3
template <class T>
void op_convolve(rng& g, int t, int it, failures& f) {
  problem pr{all_ops[it % 3], random_size(g, 300), random_size(g, 300)};
  randomize_incs(g, pr);
  pr.mem = (t + it) % 2 ? memory::pool : memory::host;
  const lengths len = lengths_of(pr.o, pr.m, pr.n);
  strided<T> a(pr.mem, len.a, pr.inca, 0, 1), b(pr.mem, len.b, pr.incb, 0, 1);
  strided<T> out(pr.mem, len.out, pr.incout, 0, 1);
  const std::vector<T> va = random_positive<T>(g, len.a, shape::bell);
  const std::vector<T> vb = random_positive<T>(g, len.b, shape::uniform);
  a.set(0, va);
  b.set(0, vb);
  call<T>(pr.o, pr.m, pr.n, a.data(), a.inc(), b.data(), b.inc(), out.data(), out.inc());
  const error_report rep =
      compare(out.get(0), reference(pr.o, pr.m, pr.n, widen(va), widen(vb)), tolerance<T>());
  if (rep.failures > 0) f.add(fail_at<T>(t, it, "convolve", pr.describe() + ": " + rep.describe()));
  if (const auto s = out.stray_writes(); s != 0)
    f.add(fail_at<T>(t, it, "convolve", std::to_string(s) + " stray writes"));
}

// sum: marg::sum of 2..5 terms, x + y and x - y against left folds in long double
template <class T>
void op_sum(rng& g, int t, int it, failures& f) {
  std::vector<marg::pmf<T>> xs;
  const int terms = static_cast<int>(uniform_int(g, 2, 5));
  for (int k = 0; k < terms; ++k)
    xs.push_back(random_pmf<T>(g, random_size(g, 64), uniform_int(g, -50, 50)));
  auto check = [&](const marg::pmf<T>& got, const std::vector<marg::pmf<T>>& ts, const char* w) {
    std::int64_t lower = 0;
    const rvec want = ref_sum(ts, lower);
    const error_report rep = compare(got.probs(), want, 4 * tolerance<T>());
    if (got.lower() != lower || rep.failures > 0)
      f.add(fail_at<T>(t, it, w,
                       "lower " + std::to_string(got.lower()) + " (want " + std::to_string(lower) +
                           "), " + rep.describe()));
  };
  check(marg::sum(xs), xs, "sum");
  check(xs[0] + xs[1], {xs[0], xs[1]}, "x + y");
  check(xs[0] - xs[1], {xs[0], -xs[1]}, "x - y");
}

// condition: hard evidence on x + y against the brute-force joint
template <class T>
void op_condition(rng& g, int t, int it, failures& f) {
  const auto x = random_pmf<T>(g, random_size(g, 100), uniform_int(g, -20, 20));
  const auto y = random_pmf<T>(g, random_size(g, 100), uniform_int(g, -20, 20));
  const std::int64_t k = uniform_int(g, x.lower() + y.lower(), x.upper() + y.upper());
  const auto post = marg::condition_on_sum(x, y, k);
  real total = 0;
  const rvec w = ref_posterior_first(x, y, k, total);
  const real ll = std::log(total);
  if (std::fabs(post.log_likelihood - ll) > tolerance<T>() * (1 + std::fabs(ll)))
    f.add(fail_at<T>(t, it, "condition",
                     "log_likelihood " + std::to_string(post.log_likelihood) + " want " +
                         std::to_string(static_cast<double>(ll))));
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const real want = w[i] / total;
    const real got = post.first.prob(x.lower() + i);
    if (relative_error(got, want) > tolerance<T>()) {
      f.add(fail_at<T>(t, it, "condition", "posterior of x at " + std::to_string(x.lower() + i)));
      return;
    }
  }
}

// sample: draws from pmfs shared by every thread (their cumulative tables are
// built lazily by whichever thread comes first), cdf against a long double sum
template <class T>
void op_sample(rng& g, int t, int it, const std::vector<marg::pmf<T>>& shared,
               const std::vector<rvec>& shared_cdf, failures& f) {
  const auto& x = shared[(t + it) % shared.size()];
  const rvec& cdf = shared_cdf[(t + it) % shared.size()];
  for (int k = 0; k < 200; ++k) {
    const std::int64_t v = x.sample(g);
    if (v < x.lower() || v > x.upper() || x.prob(v) <= 0) {
      f.add(fail_at<T>(t, it, "sample", "drew " + std::to_string(v)));
      return;
    }
  }
  for (std::int64_t i = 0; i < x.size(); ++i)
    if (std::fabs(x.cdf(x.lower() + i) - cdf[i]) > 8 * std::numeric_limits<T>::epsilon()) {
      f.add(fail_at<T>(t, it, "cdf", "at " + std::to_string(x.lower() + i)));
      return;
    }
}

}  // namespace

TEMPLATE_TEST_CASE("concurrency: 8 threads mix allocate convolve sum condition and sample",
                   "[reliability][concurrency]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  threads_guard cpu_threads(2);  // the CPU backend's own workers run under the callers
  std::vector<marg::pmf<T>> shared;
  std::vector<rvec> shared_cdf;
  for (const int len : {1, 17, 256, 1000}) {
    std::vector<T> w = random_positive<T>(g, len, shape::scattered);
    w[len / 2] = 0;  // a zero inside (or the only value of len 1 set back below)
    if (len == 1) w[0] = 1;
    shared.push_back(marg::categorical<T>(w, uniform_int(g, -100, 100)));
    const rvec p = widen_pmf(shared.back());
    rvec c(p.size());
    real s = 0, total = 0;
    for (real v : p) total += v;
    for (std::size_t i = 0; i < p.size(); ++i) c[i] = (s += p[i]) / total;
    shared_cdf.push_back(c);
  }
  std::vector<rng> engines;
  for (int t = 0; t < n_threads; ++t) engines.emplace_back(g());
  const auto before = marg::pool_stats();
  failures f;
  std::atomic<int> errors{0};
  std::atomic<int> ready{0}, done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < n_threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < n_threads) std::this_thread::yield();  // start together
      for (int it = 0; it < iterations; ++it) {
        try {
          switch ((t + it) % 5) {
            case 0:
              op_allocate<T>(engines[t], t, it, f);
              break;
            case 1:
              op_convolve<T>(engines[t], t, it, f);
              break;
            case 2:
              op_sum<T>(engines[t], t, it, f);
              break;
            case 3:
              op_condition<T>(engines[t], t, it, f);
              break;
            case 4:
              op_sample<T>(engines[t], t, it, shared, shared_cdf, f);
              break;
          }
          ++done;
        } catch (const std::exception& e) {
          ++errors;
          f.add(fail_at<T>(t, it, "exception", e.what()));
        }
      }
    });
  for (auto& th : pool) th.join();
  INFO(f.describe());
  CHECK(errors.load() == 0);
  CHECK(f.count() == 0);
  CHECK(done.load() == n_threads * iterations);
  // every block of the workers went back (the shared pmfs are still alive)
  CHECK(marg::pool_stats().bytes_in_use == before.bytes_in_use);
}
