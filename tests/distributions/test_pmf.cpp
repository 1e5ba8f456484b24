// marg::pmf<T> accessors, copy semantics and the factories against long
// double references (recurrences and products, not the library's formulas).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test::dist;

namespace {

// mean and variance of probs on lower.. by plain long double loops
template <class T>
std::pair<real, real> ref_moments(const std::vector<T>& p, std::int64_t lower) {
  real s = 0, m = 0, v = 0;
  for (std::size_t i = 0; i < p.size(); ++i) s += p[i], m += (lower + static_cast<real>(i)) * p[i];
  m /= s;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const real d = lower + static_cast<real>(i) - m;
    v += d * d * p[i];
  }
  return {m, v / s};
}

template <class T>
real eps() {
  return std::numeric_limits<T>::epsilon();
}

}  // namespace

TEMPLATE_TEST_CASE("pmf: accessors against long double loops", "[distributions]", float, double) {
  using T = TestType;
  MARG_SEEDED_RNG(g);
  for (const int len : {1, 2, 7, 31, 256}) {
    const std::int64_t lower = marg::test::uniform_int(g, -1000, 1000);
    std::vector<T> w = marg::test::random_positive<T>(g, len, marg::test::shape::scattered);
    const marg::pmf<T> x = marg::categorical<T>(w, lower);
    CAPTURE(len, lower);
    REQUIRE(x.lower() == lower);
    REQUIRE(x.upper() == lower + len - 1);
    REQUIRE(x.size() == len);
    CHECK(x.truncated_mass() == 0);
    real total = 0;
    for (T v : w) total += v;
    const std::vector<T> p = x.probs();
    real cum = 0;
    for (int i = 0; i < len; ++i) {
      const real want = w[i] / total;
      CHECK(std::fabs(p[i] - want) <= 2 * eps<T>() * want);
      CHECK(x.prob(lower + i) == p[i]);
      CHECK(x.log_prob(lower + i) == Approx(std::log(static_cast<T>(p[i]))));
      cum += p[i];
      CHECK(std::fabs(x.cdf(lower + i) - cum) <= 4 * eps<T>());
    }
    CHECK(x.prob(lower - 1) == 0);
    CHECK(x.prob(lower + len) == 0);
    CHECK(x.log_prob(lower - 1) == -std::numeric_limits<T>::infinity());
    CHECK(x.log_prob(lower + len) == -std::numeric_limits<T>::infinity());
    CHECK(x.cdf(lower - 1) == 0);
    CHECK(x.cdf(lower + len + 5) == 1);
    CHECK(x.prob(INT64_MIN) == 0);
    CHECK(x.prob(INT64_MAX) == 0);
    const auto [m, v] = ref_moments(p, lower);
    CHECK(std::fabs(x.mean() - m) <= 8 * eps<T>() * (std::fabs(m) + 1));
    CHECK(std::fabs(x.variance() - v) <= 8 * eps<T>() * (v + 1));
  }
}

TEMPLATE_TEST_CASE("pmf: copies share storage and moves leave an empty pmf", "[distributions]",
                   float, double) {
  using T = TestType;
  marg::pmf<T> x = marg::categorical<T>({1, 2, 3}, 5);
  const marg::pmf<T> y = x;  // O(1) copy: same storage
  CHECK(y.data() == x.data());
  const marg::pmf<T> z = x + 10;  // shifts share storage too
  CHECK(z.data() == x.data());
  CHECK(z.lower() == 15);
  marg::pmf<T> w = std::move(x);
  CHECK(x.empty());
  CHECK(x.size() == 0);
  CHECK(w.data() == y.data());
  CHECK_THROWS_AS(x.prob(5), marg::invalid_argument);
  CHECK_THROWS_WITH(x.lower(), Catch::Contains("empty"));
  const marg::pmf<T> e;
  CHECK(e.empty());
  CHECK_THROWS_AS(e.mean(), marg::invalid_argument);
  CHECK_THROWS_AS(e.probs(), marg::invalid_argument);
  CHECK(y.prob(6) == Approx(T(2) / 6));
}

TEMPLATE_TEST_CASE("factories: binomial against the ratio recurrence and tails included",
                   "[distributions]", float, double) {
  using T = TestType;
  for (const std::int64_t n : {0, 1, 2, 7, 100, 1000, 4099}) {
    for (const double p : {0.5, 0.03, 0.9, 1e-4}) {
      CAPTURE(n, p);
      const auto x = marg::binomial<T>(n, static_cast<T>(p));
      REQUIRE(x.lower() == 0);
      REQUIRE(x.upper() == n);
      const auto rep = rel_error(x.probs(), ref_binomial(n, static_cast<T>(p)), tail_floor<T>());
      INFO(rep.describe());
      CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-12 : 2e-6));
    }
  }
  // edge probabilities: all mass on one end
  CHECK(marg::binomial<T>(5, 0).prob(0) == 1);
  CHECK(marg::binomial<T>(5, 1).prob(5) == 1);
  CHECK(marg::binomial<T>(5, 1).prob(4) == 0);
}

TEST_CASE("factories: binomial(100000 and 0.5) has correct tails", "[distributions]") {
  const std::int64_t n = 100000;
  const auto x = marg::binomial<double>(n, 0.5);
  const rvec ref = ref_binomial(n, 0.5L);
  const auto rep = rel_error(x.probs(), ref, 1e-300L);
  INFO(rep.describe());
  CHECK(rep.compared > 8000);  // the tails to 1e-300 are in the comparison
  CHECK(rep.worst <= 1e-10);
  // log_prob at the centre and symmetric tails
  CHECK(x.log_prob(n / 2) == Approx(static_cast<double>(std::log(ref[n / 2]))).epsilon(1e-13));
  CHECK(x.prob(46000) == x.prob(54000));
}

TEMPLATE_TEST_CASE("factories: log_prob is accurate for tiny probabilities", "[distributions]",
                   float, double) {
  using T = TestType;
  // P(0) = 2^-k: the smallest normal powers of two of each type
  const int k = std::is_same_v<T, double> ? 1000 : 120;
  const auto x = marg::binomial<T>(k, T(0.5));
  const real want = -k * std::log(2.0L);
  CHECK(std::fabs(x.log_prob(0) - want) <= 4 * eps<T>() * std::fabs(want));
  CHECK(std::fabs(x.log_prob(k) - want) <= 4 * eps<T>() * std::fabs(want));
}

TEMPLATE_TEST_CASE("factories: poisson against the recurrence and truncation documented",
                   "[distributions]", float, double) {
  using T = TestType;
  for (const double lambda : {0.5, 7.0, 250.3, 3000.0}) {
    for (const double tail : {1e-6, 1e-12, 0.0}) {
      const T t = tail == 0 ? marg::default_tail<T>() : static_cast<T>(tail);
      CAPTURE(lambda, t);
      const auto x = marg::poisson<T>(static_cast<T>(lambda), t);
      REQUIRE(x.lower() == 0);
      const std::int64_t K = x.upper();
      CHECK(K >= lambda);
      // the dropped mass is below tail, and matches 1 - P(X <= K) of the reference
      rvec ref = ref_poisson(static_cast<T>(lambda), K + 2000);
      real kept = 0, dropped = 0;
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(ref.size()); ++k)
        (k <= K ? kept : dropped) += ref[k];
      CHECK(x.truncated_mass() < t);
      CHECK(x.truncated_mass() > 0);
      CHECK(std::fabs(x.truncated_mass() - dropped) <= 1e-6 * dropped + 1e-18);
      // the truncation is not wasteful: keeping one value less would drop >= tail / 50
      CHECK(dropped + ref[K] >= t / 50);
      ref.resize(K + 1);
      for (auto& v : ref) v /= kept;  // the law conditioned on the kept support
      const auto rep = rel_error(x.probs(), ref, tail_floor<T>());
      INFO(rep.describe());
      CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-11 : 2e-6));
    }
  }
  CHECK(marg::poisson<T>(0).size() == 1);
  CHECK(marg::poisson<T>(0).prob(0) == 1);
}

TEMPLATE_TEST_CASE("factories: geometric and negative binomial", "[distributions]", float, double) {
  using T = TestType;
  const real tol = std::is_same_v<T, double> ? 1e-11 : 2e-6;
  for (const double p : {0.9, 0.3, 0.01}) {
    CAPTURE(p);
    const auto x = marg::geometric<T>(static_cast<T>(p), T(1e-5));
    const std::int64_t K = x.upper();
    const real q = 1 - static_cast<real>(static_cast<T>(p));
    const real dropped = std::pow(q, K + 1);
    CHECK(x.truncated_mass() == Approx(static_cast<double>(dropped)).epsilon(1e-5));
    CHECK(dropped < 1e-5);
    CHECK(dropped / q >= 1e-5);  // K is the smallest such value
    rvec ref(K + 1);
    for (std::int64_t k = 0; k <= K; ++k) ref[k] = (1 - q) * std::pow(q, k) / (1 - dropped);
    const auto rep = rel_error(x.probs(), ref, tail_floor<T>());
    INFO(rep.describe());
    CHECK(rep.worst <= tol);
    for (const double r : {0.5, 1.0, 3.0, 12.5}) {
      CAPTURE(r);
      const auto y = marg::negative_binomial<T>(static_cast<T>(r), static_cast<T>(p), T(1e-9));
      const std::int64_t L = y.upper();
      rvec nb(L + 5000);
      const real rr = static_cast<T>(r);
      nb[0] = std::pow(1 - q, rr);
      for (std::size_t k = 0; k + 1 < nb.size(); ++k) nb[k + 1] = nb[k] * (k + rr) / (k + 1) * q;
      real kept = 0, tail = 0;
      for (std::int64_t k = 0; k < static_cast<std::int64_t>(nb.size()); ++k)
        (k <= L ? kept : tail) += nb[k];
      CHECK(y.truncated_mass() < 1e-9);
      CHECK(std::fabs(y.truncated_mass() - tail) <= 1e-4 * tail + 1e-20);
      nb.resize(L + 1);
      for (auto& v : nb) v /= kept;
      const auto rep2 = rel_error(y.probs(), nb, tail_floor<T>());
      INFO(rep2.describe());
      CHECK(rep2.worst <= (std::is_same_v<T, double> ? 1e-10 : 4e-6));
    }
  }
  CHECK(marg::geometric<T>(1).size() == 1);
  CHECK(marg::negative_binomial<T>(2, 1).size() == 1);
}

TEMPLATE_TEST_CASE("factories: beta-binomial against products of rising factorials",
                   "[distributions]", float, double) {
  using T = TestType;
  for (const std::int64_t n : {0, 1, 10, 60}) {
    // huge shapes too: lgamma differences lost every digit there (fuzzing finding F3)
    for (const auto& [a, b] :
         {std::pair{1.0, 1.0}, {0.5, 2.5}, {20.0, 3.0}, {1e30, 1e30}, {1e30, 2.0}, {3.0, 1e25}}) {
      CAPTURE(n, a, b);
      const real la = static_cast<T>(a), lb = static_cast<T>(b);
      rvec ref(n + 1);
      for (std::int64_t k = 0; k <= n; ++k) {
        real c = 1;  // C(n, k) (a)_k (b)_{n-k} / (a+b)_n
        for (std::int64_t i = 0; i < k; ++i) c *= static_cast<real>(n - i) / (i + 1) * (la + i);
        for (std::int64_t i = 0; i < n - k; ++i) c *= lb + i;
        for (std::int64_t i = 0; i < n; ++i) c /= la + lb + i;
        ref[k] = c;
      }
      const auto rep = rel_error(marg::beta_binomial<T>(n, la, lb).probs(), ref, tail_floor<T>());
      INFO(rep.describe());
      CHECK(rep.worst <= (std::is_same_v<T, double> ? 1e-12 : 2e-6));
    }
  }
}

TEMPLATE_TEST_CASE("factories: bernoulli and uniform_int and delta and categorical",
                   "[distributions]", float, double) {
  using T = TestType;
  const auto b = marg::bernoulli<T>(T(0.25));
  CHECK(b.probs() == std::vector<T>{T(0.75), T(0.25)});
  const auto u = marg::uniform_int<T>(-3, 3);
  CHECK(u.size() == 7);
  CHECK(u.prob(0) == T(1) / 7);
  const auto d = marg::delta<T>(-42);
  CHECK(d.lower() == -42);
  CHECK(d.upper() == -42);
  CHECK(d.mean() == -42);
  CHECK(d.variance() == 0);
  const auto c = marg::categorical({0.2, 0.8});  // double from a braced list
  CHECK(c.prob(1) == 0.8);
  const auto z = marg::categorical<T>({0, 0, 3, 0}, 10);  // zero weights are kept
  CHECK(z.size() == 4);
  CHECK(z.prob(12) == 1);
  CHECK(z.log_prob(10) == -std::numeric_limits<T>::infinity());
  CHECK(marg::uniform_int<T>(INT64_MAX, INT64_MAX).prob(INT64_MAX) == 1);
}
