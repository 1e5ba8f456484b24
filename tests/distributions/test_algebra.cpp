// Sums, differences and shifts of pmfs against closed forms and long double
// loops, on both backends, float and double.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test::dist;

namespace {

template <class T>
real sum_tolerance() {
  return std::is_same_v<T, double> ? 1e-10L : 2e-4L;
}

// long double DP of independent terms given as probability vectors from lower 0
rvec ref_sum(const std::vector<rvec>& terms) {
  rvec r{1};
  for (const auto& t : terms) r = marg::test::ref_convolve(r, t);
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE(
    "algebra: Binomial(n1 p) + Binomial(n2 p) = Binomial(n1+n2 p) and tails included",
    "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  for (const auto& [n1, n2] :
       {std::pair<int, int>{1, 1}, {3, 10}, {300, 500}, {501, 7}, {997, 1009}}) {
    for (const double p : {0.5, 0.11, 0.93}) {
      CAPTURE(n1, n2, p);
      const auto z =
          marg::binomial<T>(n1, static_cast<T>(p)) + marg::binomial<T>(n2, static_cast<T>(p));
      REQUIRE(z.lower() == 0);
      REQUIRE(z.upper() == n1 + n2);
      const auto rep =
          rel_error(z.probs(), ref_binomial(n1 + n2, static_cast<T>(p)), tail_floor<T>());
      INFO(rep.describe());
      CHECK(rep.worst <= sum_tolerance<T>());
    }
  }
}

TEMPLATE_TEST_CASE("algebra: sums of Poissons are Poisson", "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const T tail = std::is_same_v<T, double> ? T(1e-300) : T(1e-30);
  for (const auto& [a, b] : {std::pair{0.3, 2.0}, {17.5, 4.25}, {400.0, 123.0}}) {
    CAPTURE(a, b);
    const auto x = marg::poisson<T>(static_cast<T>(a), tail),
               y = marg::poisson<T>(static_cast<T>(b), tail);
    const auto z = x + y;
    CHECK(z.truncated_mass() <= 2 * tail);
    const real lambda = static_cast<real>(static_cast<T>(a)) + static_cast<T>(b);
    // up to 5 standard deviations above the mean: there the truncation of x and
    // y at tail changes nothing visible (x given x + y = k is binomial, far
    // from the truncation point)
    const rvec ref = ref_poisson(lambda, static_cast<std::int64_t>(lambda + 5 * std::sqrt(lambda)));
    const auto rep = rel_error(z.probs(), ref, tail_floor<T>());
    INFO(rep.describe());
    CHECK(rep.compared > 0);
    CHECK(rep.worst <= sum_tolerance<T>());
    CHECK(z.mean() == Approx(static_cast<double>(lambda)).epsilon(1e-5));
    CHECK(z.variance() == Approx(static_cast<double>(lambda)).epsilon(1e-4));
  }
}

TEMPLATE_TEST_CASE("algebra: k dice against exact integer counts", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const auto die = marg::uniform_int<T>(1, 6);
  for (const int k : {1, 2, 3, 5, 10, 17, 24}) {
    CAPTURE(k);
    // counts of each total, exact in unsigned 64-bit (6^24 < 2^63)
    std::vector<std::uint64_t> counts{1};
    for (int d = 0; d < k; ++d) {
      std::vector<std::uint64_t> next(counts.size() + 5, 0);
      for (std::size_t i = 0; i < counts.size(); ++i)
        for (int f = 0; f < 6; ++f) next[i + f] += counts[i];
      counts = next;
    }
    const real total = std::pow(6.0L, k);
    rvec ref(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) ref[i] = counts[i] / total;
    std::vector<marg::pmf<T>> dice(k, die);
    const auto tree = marg::sum(dice);
    marg::pmf<T> chain = die;
    for (int d = 1; d < k; ++d) chain = chain + die;
    for (const marg::pmf<T>* z : {&tree, static_cast<const marg::pmf<T>*>(&chain)}) {
      REQUIRE(z->lower() == k);
      REQUIRE(z->upper() == 6 * k);
      const auto rep = rel_error(z->probs(), ref, 0);
      INFO(rep.describe());
      CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-13L : 2e-5L));
    }
  }
}

TEMPLATE_TEST_CASE("algebra: Poisson-binomial of 1000 Bernoullis against a long double DP",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  std::uniform_real_distribution<double> u(0.01, 0.99);
  std::vector<marg::pmf<T>> xs;
  rvec dp{1};
  for (int i = 0; i < 1000; ++i) {
    const T p = static_cast<T>(u(g));
    xs.push_back(marg::bernoulli<T>(p));
    rvec next(dp.size() + 1, 0);
    const real lp = xs.back().prob(1), lq = xs.back().prob(0);
    for (std::size_t k = 0; k < dp.size(); ++k) next[k] += dp[k] * lq, next[k + 1] += dp[k] * lp;
    dp = next;
  }
  const auto z = marg::sum(xs);
  REQUIRE(z.lower() == 0);
  REQUIRE(z.upper() == 1000);
  const auto rep = rel_error(z.probs(), dp, tail_floor<T>());
  INFO(rep.describe());
  CHECK(rep.compared > (std::is_same_v<T, double> ? 500 : 250));
  CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-10L : 1e-3L));
}

TEMPLATE_TEST_CASE("algebra: sum of mixed lengths and supports equals the sequential DP",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const int count : {1, 2, 3, 7, 16, 33}) {
    CAPTURE(count);
    std::vector<marg::pmf<T>> xs;
    std::vector<rvec> terms;
    std::int64_t lower = 0;
    for (int i = 0; i < count; ++i) {
      // repeated lengths so that batched levels occur, with primes and 1
      const int len =
          std::vector<int>{1, 2, 5, 5, 13, 13, 13, 31}[marg::test::uniform_int(g, 0, 7)];
      const std::int64_t lo = marg::test::uniform_int(g, -50, 50);
      const auto w = marg::test::random_positive<T>(g, len, marg::test::shape::bell);
      xs.push_back(marg::categorical<T>(w, lo));
      terms.push_back(marg::test::widen(xs.back().probs()));
      lower += lo;
    }
    const auto z = marg::sum(xs);
    const rvec ref = ref_sum(terms);
    REQUIRE(z.lower() == lower);
    REQUIRE(z.size() == static_cast<std::int64_t>(ref.size()));
    const auto rep = rel_error(z.probs(), ref, tail_floor<T>());
    INFO(rep.describe());
    CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-12L : 1e-4L));
  }
  CHECK(marg::sum(std::vector<marg::pmf<T>>{}).prob(0) == 1);  // the empty sum is delta(0)
}

TEMPLATE_TEST_CASE("algebra: negation and differences and shifts against loops", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const auto x = marg::categorical<T>({1, 2, 3, 4, 5}, -2);  // -2..2
  const auto y = marg::categorical<T>({5, 1, 1}, 10);        // 10..12
  const auto nx = -x;
  CHECK(nx.lower() == -2);
  CHECK(nx.upper() == 2);
  for (int k = -2; k <= 2; ++k) CHECK(nx.prob(k) == x.prob(-k));
  const auto d = x - y;  // -14..-8
  CHECK(d.lower() == -14);
  CHECK(d.upper() == -8);
  const auto kd = 7 - y;  // -5..-3
  CHECK(kd.lower() == -5);
  for (std::int64_t k = d.lower(); k <= d.upper(); ++k) {
    real want = 0;
    for (std::int64_t j = -2; j <= 2; ++j) want += static_cast<real>(x.prob(j)) * y.prob(j - k);
    CHECK(std::fabs(d.prob(k) - want) <= 8 * std::numeric_limits<T>::epsilon() * want);
    CHECK(kd.prob(7 - (k + 15)) == y.prob(k + 15 + 0 * want));
  }
  CHECK((x + 5).lower() == 3);
  CHECK((5 + x).upper() == 7);
  CHECK((x - 5).lower() == -7);
  CHECK((marg::delta<T>(-1) - INT64_MIN).lower() == INT64_MAX);  // -INT64_MIN itself overflows
  CHECK(((x + 3) - x).mean() == Approx(3));
}

TEMPLATE_TEST_CASE("algebra: sum trees with carried terms, shared lengths and truncated terms",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const T tail = std::is_same_v<T, double> ? T(1e-30) : T(1e-12);
  // odd counts carry a term up; lengths 1..6 give equal output lengths from
  // different (m, n) groups (2 + 5 - 1 = 3 + 4 - 1), so batched runs break
  for (const int count : {2, 3, 5, 64, 127, 257, 1001}) {
    CAPTURE(count);
    std::vector<marg::pmf<T>> xs;
    std::vector<rvec> terms;
    std::int64_t lower = 0;
    real log_kept = 0;  // log of the kept mass 1 - t = prod (1 - t_i), exact for tiny t_i
    for (int i = 0; i < count; ++i) {
      const int kind = marg::test::uniform_int(g, 0, 9);
      if (kind == 0) {  // a truncated term: a small Poisson
        xs.push_back(
            marg::poisson<T>(static_cast<T>(0.5 + marg::test::uniform_int(g, 0, 3)), tail));
      } else {
        const int len = marg::test::uniform_int(g, 1, 6);
        const auto w = marg::test::random_positive<T>(g, len, marg::test::shape::bell);
        xs.push_back(marg::categorical<T>(w, marg::test::uniform_int(g, -20, 20)));
      }
      terms.push_back(marg::test::widen(xs.back().probs()));
      lower += xs.back().lower();
      log_kept += std::log1p(-static_cast<real>(xs.back().truncated_mass()));
    }
    const auto z = marg::sum(xs);
    const rvec ref = ref_sum(terms);
    REQUIRE(z.lower() == lower);
    REQUIRE(z.size() == static_cast<std::int64_t>(ref.size()));
    const auto rep = rel_error(z.probs(), ref, tail_floor<T>());
    INFO(rep.describe());
    CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-11L : 1e-3L));
    const real want = -std::expm1(log_kept);
    CHECK(std::fabs(z.truncated_mass() - want) <= 1e-3L * want + 1e-30L);
    // sums of sums: inputs that are earlier results (device-resident on CUDA)
    const auto half = static_cast<std::ptrdiff_t>(xs.size() / 2);
    const auto zz = marg::sum(std::vector<marg::pmf<T>>{
        marg::sum(std::vector<marg::pmf<T>>(xs.begin(), xs.begin() + half)),
        marg::sum(std::vector<marg::pmf<T>>(xs.begin() + half, xs.end()))});
    REQUIRE(zz.lower() == lower);
    const auto rep2 = rel_error(zz.probs(), ref, tail_floor<T>());
    INFO(rep2.describe());
    CHECK(rep2.worst <= (std::is_same_v<T, double> ? 1e-11L : 1e-3L));
  }
}

TEMPLATE_TEST_CASE("algebra: sum is bit for bit the same for any CPU thread count",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  std::vector<marg::pmf<T>> xs;
  for (int i = 0; i < 20011; ++i) {  // a prime: carried terms on several levels
    const int len = i % 7 == 0 ? 3 : 2;
    xs.push_back(
        marg::categorical<T>(marg::test::random_positive<T>(g, len, marg::test::shape::bell),
                             marg::test::uniform_int(g, -3, 3)));
  }
  const int threads = marg::cpu_threads();
  std::vector<std::vector<T>> got;
  for (const int t : {1, 2, 5}) {
    marg::set_cpu_threads(t);
    got.push_back(marg::sum(xs).probs());
  }
  marg::set_cpu_threads(threads);
  CHECK(got[0] == got[1]);
  CHECK(got[0] == got[2]);
}
