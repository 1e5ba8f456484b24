// Faults: the pool cap hit in the middle of a chain of sums and of a
// balanced sum tree (marg::out_of_memory, nothing leaked, earlier results
// intact, the pool usable), absurd sizes rejected before any allocation, no
// visible CUDA device (a child process: ctest test
// reliability_no_visible_device). tests/numeric/test_pool.cpp already covers
// the cap on raw allocate() calls; tests/numeric/test_errors.cpp every bad
// argument of the banded products with ordinary values.
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "reliability_fixture.hpp"

using namespace marg::test;
using namespace marg::test::rel;
using Catch::Contains;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

// the pool's counters must not move across a call that fails
struct stats_unchanged {
  marg::pool_statistics before = marg::pool_stats();
  bool check() const {
    const auto after = marg::pool_stats();
    return after.bytes_in_use == before.bytes_in_use;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("faults: pool cap hit in a chain of sums", "[reliability][faults]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  pool_limit_guard restore;
  // a long first term so that each step allocates ~ 100000 * sizeof(T)
  const auto x0 = marg::categorical<T>(random_positive<T>(g, 100000, shape::uniform), -7);
  const auto y = marg::categorical<T>(random_positive<T>(g, 3, shape::uniform), 1);
  marg::pool_trim();
  const auto start = marg::pool_stats();
  marg::set_pool_limit(start.bytes_reserved + 8 * MiB);

  std::vector<marg::pmf<T>> chain{x0};
  std::vector<std::vector<T>> snapshots{x0.probs()};
  bool hit = false;
  for (int step = 0; step < 200 && !hit; ++step) {
    const stats_unchanged s;
    try {
      chain.push_back(chain.back() + y);
      snapshots.push_back(chain.back().probs());
    } catch (const marg::out_of_memory& e) {
      hit = true;
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("requested") != std::string::npos);
      CHECK(s.check());  // the failed step leaked nothing
    }
  }
  CAPTURE(chain.size());
  REQUIRE(hit);
  CHECK(chain.size() >= 3);
  // every earlier result is intact, bit for bit, and the last one is right
  for (std::size_t i = 0; i < chain.size(); ++i) CHECK(chain[i].probs() == snapshots[i]);
  rvec want = widen_pmf(x0);
  for (std::size_t i = 1; i < chain.size(); ++i) want = ref_convolve(want, widen_pmf(y));
  // the documented bound: relative, with an absolute slack below the
  // smallest normal T (a float tail of the chain can be subnormal)
  const std::vector<T>& last = chain.back().probs();
  REQUIRE(last.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < last.size(); ++i)
    if (!within_subnormal_bound<T>(last[i], want[i], static_cast<int>(chain.size()),
                                   4 * tolerance<T>()))
      ++bad;
  INFO("last: " << compare(last, want, 4 * tolerance<T>()).describe());
  CHECK(bad == 0);

  // the pool is usable at once: free half of the chain, go on under the same cap
  chain.resize(chain.size() / 2);
  const auto more = chain.back() + y;
  want = widen_pmf(chain.back());
  want = ref_convolve(want, widen_pmf(y));
  CHECK(compare(more.probs(), want, tolerance<T>()).failures == 0);
}

TEMPLATE_TEST_CASE("faults: pool cap hit inside a balanced sum tree", "[reliability][faults]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  pool_limit_guard restore;
  // 16 terms of 1000 values; the cap is swept upward in 32 KiB steps from
  // what is reserved, so that the failing allocation moves through the levels
  // of the tree (and its staging copies) until the sum fits
  std::vector<marg::pmf<T>> xs;
  for (int k = 0; k < 16; ++k)
    xs.push_back(marg::categorical<T>(random_positive<T>(g, 1000, shape::uniform), k));
  std::vector<std::vector<T>> before_probs;
  for (const auto& x : xs) before_probs.push_back(x.probs());
  std::int64_t lower = 0;
  const rvec want = ref_sum(xs, lower);
  int failed = 0, succeeded = 0;
  for (std::size_t extra = 0; extra <= 2 * MiB && succeeded < 2; extra += 32 * 1024) {
    marg::pool_trim();
    marg::set_pool_limit(marg::pool_stats().bytes_reserved + extra);
    const stats_unchanged s;
    try {
      const auto total = marg::sum(xs);
      ++succeeded;
      CHECK(total.lower() == lower);
      const error_report rep = compare_in_range(total.probs(), want, 4 * tolerance<T>());
      INFO(rep.describe());
      CHECK(rep.failures == 0);
    } catch (const marg::out_of_memory&) {
      ++failed;
      CAPTURE(extra);
      CHECK(s.check());  // the levels built before the failure were all freed
    }
  }
  CAPTURE(failed, succeeded);
  CHECK(failed >= 2);
  CHECK(succeeded >= 1);
  for (std::size_t k = 0; k < xs.size(); ++k) CHECK(xs[k].probs() == before_probs[k]);
}

TEMPLATE_TEST_CASE("faults: absurd sizes are rejected before any allocation",
                   "[reliability][faults]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  pool_limit_guard restore;
  // pool requests past the address space or the cap
  {
    const stats_unchanged s;
    CHECK_THROWS_AS(marg::allocate(std::numeric_limits<std::size_t>::max()), marg::out_of_memory);
    CHECK_THROWS_AS(marg::allocate(std::size_t{1} << 62), marg::out_of_memory);
    CHECK_THROWS_AS(marg::array<T>(std::numeric_limits<std::size_t>::max() / 2),
                    marg::out_of_memory);
    CHECK(s.check());
  }
  // a float pmf of 2^30 + 1 values whose memory is never touched (pool pages
  // are committed on first use): x + x would have 2^31 + 1 values, past
  // INT_MAX. The pool rounds 4 GiB + 4 bytes up to its 5 GiB size class.
  using F = float;
  const std::size_t huge = (std::size_t{1} << 30) + 1;
  marg::set_pool_limit(marg::pool_stats().bytes_reserved + 2 * huge * sizeof(F));
  const marg::pmf<F> x(marg::detail::trusted, marg::array<F>(huge), 0);
  const auto small = marg::categorical<F>({1, 2, 3});
  const stats_unchanged s;
  CHECK_THROWS_WITH(x + x, Contains("size(x) + size(y) - 1 = 2147483649"));
  CHECK_THROWS_AS(marg::sum(std::vector<marg::pmf<F>>{x, x}), marg::invalid_argument);
  CHECK_NOTHROW(small + small);
  CHECK_THROWS_AS(marg::condition_on_sum(x, x, std::vector<F>{1}), marg::invalid_argument);
  CHECK_THROWS_AS(marg::sum_grad(x, x, std::vector<F>{1}), marg::invalid_argument);
  CHECK(s.check());
  // shifts past int64 on a long support (O(1): nothing copied)
  CHECK_THROWS_AS(x + INT64_MAX, marg::invalid_argument);
  CHECK_THROWS_AS(x - INT64_MIN, marg::invalid_argument);
  CHECK(s.check());
}

TEMPLATE_TEST_CASE("faults: batch strides whose extent overflows are rejected",
                   "[reliability][faults]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // valid buffers of one problem; a stride that puts problem 1 or 2 past the
  // end of the address space can never be valid and must not be followed
  std::vector<T> a(64, T(0.5)), b(64, T(0.25)), out(64, T(-1));
  for (const op o : all_ops) {
    const lengths len = lengths_of(o, 5, 4);
    for (const std::int64_t bad : {INT64_MAX, INT64_MAX / 2, INT64_MAX / 3 + 1}) {
      INFO(name_of(o) << " stride " << bad);
      CHECK_THROWS_AS(
          call_batched<T>(o, 5, 4, a.data(), 1, bad, b.data(), 1, len.b, out.data(), 1, len.out, 3),
          marg::invalid_argument);
      CHECK_THROWS_AS(
          call_batched<T>(o, 5, 4, a.data(), 1, len.a, b.data(), 1, bad, out.data(), 1, len.out, 3),
          marg::invalid_argument);
      CHECK_THROWS_AS(
          call_batched<T>(o, 5, 4, a.data(), 1, len.a, b.data(), 1, len.b, out.data(), 1, bad, 3),
          marg::invalid_argument);
      CHECK_THROWS_AS(call_batched<T>(o, 5, 4, a.data(), 1, bad, b.data(), 1, len.b, out.data(), 1,
                                      len.out, INT_MAX),
                      marg::invalid_argument);
    }
    for (const T v : out) CHECK(v == T(-1));  // nothing written
  }
}

TEST_CASE("faults: no visible CUDA device: the automatic backend runs on the CPU",
          "[.no_visible_device]") {
  // run by ctest as reliability_no_visible_device with CUDA_VISIBLE_DEVICES=""
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  REQUIRE(env != nullptr);
  REQUIRE(std::string(env).empty());
  CHECK(marg::device_count() == 0);
  backend_guard automatic(marg::backend::automatic);
  CHECK(marg::current_backend() == marg::backend::cpu);
  CHECK_THROWS_AS(marg::set_backend(marg::backend::cuda), marg::invalid_argument);
  // the reason names what is missing: no CUDA in the build, or no device
  const std::string reason = marg::cuda_unusable_reason();
  CHECK_THAT(reason, Contains(marg::cuda_compiled() ? "no CUDA device" : "no CUDA backend") ||
                         Contains("no usable CUDA device"));
  CHECK_THROWS_WITH(marg::set_backend(marg::backend::cuda), Contains(reason));
  MARG_SEEDED_RNG(g);
  for (const bool with_double : {false, true}) {
    const int m = random_size(g, 500), n = random_size(g, 500);
    const auto p = random_positive<double>(g, m, shape::bell);
    const auto q = random_positive<double>(g, n, shape::scattered);
    if (with_double) {
      std::vector<double> r(m + n - 1);
      marg::convolve<double>(m, n, p.data(), 1, q.data(), 1, r.data(), 1);
      CHECK(compare(r, ref_convolve(widen(p), widen(q)), tolerance<double>()).failures == 0);
    } else {
      const std::vector<float> pf(p.begin(), p.end()), qf(q.begin(), q.end());
      marg::array<float> r(static_cast<std::size_t>(m + n - 1));  // pool memory: host here
      marg::convolve<float>(m, n, pf.data(), 1, qf.data(), 1, r.data(), 1);
      CHECK(compare(std::vector<float>(r.begin(), r.end()), ref_convolve(widen(pf), widen(qf)),
                    tolerance<float>())
                .failures == 0);
    }
  }
  const auto x = marg::binomial<double>(50, 0.3), y = marg::poisson<double>(2.5);
  const auto z = x + y;
  std::int64_t lower = 0;
  // relative error where the value is a normal double (the default tail
  // reaches probabilities of 1e-300, whose products are subnormal)
  const rvec ref = ref_sum(std::vector<marg::pmf<double>>{x, y}, lower);
  const std::vector<double> got = z.probs();
  REQUIRE(got.size() == ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (ref[i] >= std::numeric_limits<double>::min())
      CHECK(std::fabs(got[i] - ref[i]) <= 1e-12L * ref[i]);
}

namespace marg::detail {
void inject_cuda_launch_error_for_testing();  // test hook in numeric/src/backend.cpp
}

TEST_CASE("faults: a failed CUDA launch becomes marg::cuda_error and the next call works",
          "[reliability][faults][cuda][inject]") {
  MARG_SKIP_IF_NO_GPU(true);
  backend_guard cuda(marg::backend::cuda);
  try {
    marg::detail::inject_cuda_launch_error_for_testing();
    FAIL("no exception from a zero-sized grid");
  } catch (const marg::cuda_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    // file:line: cudaErrorName: message (CUDA 13.0 on an H200 named the
    // zero-sized grid cudaErrorInvalidValue)
    const auto colon = what.find(": cudaError");
    CHECK(what.rfind("device.cu:", 0) == 0);
    REQUIRE(colon != std::string::npos);
    CHECK(what.find(": ", colon + 2) != std::string::npos);
  }
  // the error was not sticky: the next call computes the right answer
  MARG_SEEDED_RNG(g);
  const int m = random_size(g, 3000), n = random_size(g, 3000);
  const auto p = random_positive<double>(g, m, shape::bell);
  const auto q = random_positive<double>(g, n, shape::scattered);
  std::vector<double> r(m + n - 1);
  marg::convolve<double>(m, n, p.data(), 1, q.data(), 1, r.data(), 1);
  CHECK(compare(r, ref_convolve(widen(p), widen(q)), tolerance<double>()).failures == 0);
}
