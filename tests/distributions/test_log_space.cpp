// Probabilities below T's range: the factories keep log-probabilities, sums
// and hard conditioning run in log space, categorical_log takes log-weights,
// and the default truncation keeps far-tail data possible. References are
// long double recurrences and direct sums, never the library's formulas.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test;
using namespace marg::test::dist;

namespace {

constexpr real ninf = -std::numeric_limits<real>::infinity();

// log Binomial(n, p) by the ratio recurrence from k = 0 (long double)
rvec ref_log_binomial(std::int64_t n, real p) {
  rvec lp(static_cast<std::size_t>(n + 1));
  lp[0] = n * std::log1p(-p);
  const real odds = std::log(p) - std::log1p(-p);
  for (std::int64_t k = 0; k < n; ++k)
    lp[k + 1] = lp[k] + std::log(static_cast<real>(n - k) / (k + 1)) + odds;
  return lp;
}

// every log-probability of x within log_tolerance (plus `ulps` of rounded inputs)
template <class T>
void expect_logs(const marg::pmf<T>& x, const rvec& want, real ulps = 0) {
  REQUIRE(x.size() == static_cast<std::int64_t>(want.size()));
  const std::vector<T> got = x.log_probs();
  std::int64_t bad = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (!log_close<T>(got[k], want[k], ulps) && bad++ < 5) {
      CAPTURE(k, want[k], got[k]);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("log space: binomial keeps every log-probability", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // double: 2^-100000 at the ends; float: 2^-1000
  const std::int64_t n = sizeof(T) == 4 ? 1000 : 100000;
  const auto x = marg::binomial<T>(n, 0.5);
  CHECK(x.has_log_probs());
  expect_logs(x, ref_log_binomial(n, 0.5L));
  CHECK(std::fabs(x.log_prob(0) - n * std::log(0.5L)) <= log_tolerance<T>(n * std::log(0.5L)));
  // values that fit T keep the linear form alone
  CHECK_FALSE(marg::binomial<T>(40, 0.5).has_log_probs());
}

TEMPLATE_TEST_CASE("log space: Binomial(N, 1/2) + itself is Binomial(2N, 1/2) at every k",
                   "[distributions][log]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const std::int64_t N = sizeof(T) == 4 ? 1000 : 20000;
  const auto x = marg::binomial<T>(N, 0.5);
  const auto s = x + x;
  CHECK(s.has_log_probs());
  // the inputs are rounded to T: allow 2 ulp of each log-probability
  const rvec want = ref_log_binomial(2 * N, 0.5L);
  expect_logs(s, want, 2);
  // difference and negation keep the log-probabilities, reversed
  const auto d = x - x;
  CHECK(d.has_log_probs());
  CHECK(d.lower() == -N);
  CHECK(log_close<T>(d.log_prob(-N), want[0], 2));
}

TEMPLATE_TEST_CASE("log space: sum of Bernoullis keeps the Poisson-binomial's far tails",
                   "[distributions][log]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // every input is linear (its probabilities fit T); the right tail of the
  // sum, prod p_i ~ 1e-7000 (double) or 1e-700 (float), does not
  const int n = sizeof(T) == 4 ? 300 : 2000;
  MARG_SEEDED_RNG(rng);
  std::uniform_real_distribution<double> u(std::log(1e-6), std::log(1e-2));
  std::vector<marg::pmf<T>> terms;
  rvec lp, lq;  // log p_i and log(1 - p_i) of the rounded inputs
  for (int i = 0; i < n; ++i) {
    terms.push_back(marg::bernoulli<T>(std::exp(u(rng))));
    REQUIRE_FALSE(terms.back().has_log_probs());
    lq.push_back(std::log(static_cast<real>(terms.back().prob(0))));
    lp.push_back(std::log(static_cast<real>(terms.back().prob(1))));
  }
  // reference: the Poisson-binomial recurrence in log space, long double
  rvec want(1, 0.0L);
  for (int i = 0; i < n; ++i) {
    rvec next(want.size() + 1, ninf);
    for (std::size_t k = 0; k < next.size(); ++k) {
      const real stay = k < want.size() ? want[k] + lq[i] : ninf;
      const real step = k > 0 ? want[k - 1] + lp[i] : ninf;
      const real top = std::max(stay, step);
      next[k] = top == ninf ? ninf : top + std::log(std::exp(stay - top) + std::exp(step - top));
    }
    want = std::move(next);
  }
  const auto s = marg::sum(terms);
  CHECK(s.has_log_probs());
  CHECK(std::isfinite(static_cast<double>(s.log_prob(n))));
  // the inputs are rounded to T: 2 ulp of each log-probability
  expect_logs(s, want, 2);
}

TEMPLATE_TEST_CASE("log space: conditioning on a far-tail sum", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const std::int64_t N = sizeof(T) == 4 ? 1000 : 100000;
  const auto x = marg::binomial<T>(N, 0.5);
  // P(x + x = 5) = C(2N, 5) 2^-2N
  const rvec want = ref_log_binomial(2 * N, 0.5L);
  const real tol = log_tolerance<T>(want[5], 4);
  CHECK(std::fabs(marg::log_prob_sum(x, x, 5) - want[5]) <= tol);
  const auto post = marg::condition_on_sum(x, x, 5);
  CHECK(std::fabs(post.log_likelihood - want[5]) <= tol);
  REQUIRE_FALSE(post.first.empty());
  REQUIRE(post.first.lower() == 0);
  REQUIRE(post.first.upper() == 5);
  // posterior of the first term: C(N, j) C(N, 5 - j) / C(2N, 5)
  const rvec lb = ref_log_binomial(N, 0.5L);
  // the inputs' log-probabilities (about -N log 2) carry T's rounding: a
  // relative error of a few epsilon * N log 2 in each posterior probability
  const real rel = 8 * std::numeric_limits<T>::epsilon() * N * std::log(2.0L);
  for (std::int64_t j = 0; j <= 5; ++j) {
    const real p = std::exp(lb[j] + lb[5 - j] - want[5]);
    CAPTURE(j, p, post.first.prob(j));
    CHECK(std::fabs(post.first.prob(j) - p) <= rel * p);
    CHECK(std::fabs(post.second.prob(5 - j) - p) <= rel * p);
  }
}

TEMPLATE_TEST_CASE("log space: soft evidence in the far tail of the sum", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // x keeps log-probabilities below T's range; the evidence is a narrow
  // Gaussian bump over the top of the sum's support, log L down to ~ -1e5
  const std::int64_t nx = sizeof(T) == 4 ? 300 : 2000, ny = sizeof(T) == 4 ? 40 : 120;
  const auto x = marg::binomial<T>(nx, 0.5);
  const auto y = marg::binomial<T>(ny, 0.3);
  REQUIRE(x.has_log_probs());
  const std::int64_t len = x.size() + y.size() - 1;
  std::vector<T> ll(static_cast<std::size_t>(len));
  for (std::int64_t i = 0; i < len; ++i) {
    const real z = (i - (len - 5)) / 3.0L;
    ll[i] = static_cast<T>(-0.5L * z * z);
  }
  // reference: long double log-sum-exp over the inputs as stored
  const std::vector<T> lx = x.log_probs(), ly = y.log_probs();
  const auto lse = [](const rvec& v) {
    real top = ninf;
    for (const real u : v) top = std::max(top, u);
    if (top == ninf) return ninf;
    real s = 0;
    for (const real u : v) s += std::exp(u - top);
    return top + std::log(s);
  };
  rvec wx(lx.size()), wy(ly.size()), terms;
  for (std::size_t j = 0; j < lx.size(); ++j) {
    terms.clear();
    for (std::size_t k = 0; k < ly.size(); ++k)
      terms.push_back(ly[k] + static_cast<real>(ll[j + k]));
    wx[j] = lx[j] + lse(terms);
  }
  for (std::size_t k = 0; k < ly.size(); ++k) {
    terms.clear();
    for (std::size_t j = 0; j < lx.size(); ++j)
      terms.push_back(lx[j] + static_cast<real>(ll[j + k]));
    wy[k] = ly[k] + lse(terms);
  }
  const real total = lse(wx);
  const auto check = [&](const marg::sum_posterior<T>& post) {
    CHECK(log_close<T>(post.log_likelihood, total, 4));
    std::int64_t bad = 0;
    for (std::size_t j = 0; j < wx.size(); ++j)
      if (!log_close<T>(post.first.log_prob(x.lower() + static_cast<std::int64_t>(j)),
                        wx[j] - total, 4) &&
          bad++ < 5)
        CHECK(false);
    for (std::size_t k = 0; k < wy.size(); ++k)
      if (!log_close<T>(post.second.log_prob(y.lower() + static_cast<std::int64_t>(k)),
                        wy[k] - total, 4) &&
          bad++ < 10)
        CHECK(false);
    CHECK(bad == 0);
  };
  check(marg::condition_on_sum_log(x, y, ll));
  // the same evidence as likelihoods: those below T's range are 0 there
  std::vector<T> L(ll.size());
  for (std::size_t i = 0; i < L.size(); ++i) L[i] = std::exp(ll[i]);
  const auto linear = marg::condition_on_sum(x, y, L);
  CHECK(std::isfinite(static_cast<double>(linear.log_likelihood)));
  CHECK(std::isfinite(static_cast<double>(linear.first.log_prob(x.upper()))));
}

TEMPLATE_TEST_CASE("log space: log_prob_sum_grad of a far-tail sum", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // P(x + y = k) ~ 2^-nx is below T's range: d/dq_i = p_{k-i} / P fits T,
  // d/dp_j = q_{k-j} / P exceeds it (+inf) except where q_{k-j} is as small
  const std::int64_t nx = sizeof(T) == 4 ? 300 : 2000, ny = 50;
  const auto x = marg::binomial<T>(nx, 0.5);
  const auto y = marg::binomial<T>(ny, 0.3);
  REQUIRE(x.has_log_probs());
  const std::int64_t k = nx + ny - 3;
  const std::vector<T> lx = x.log_probs(), ly = y.log_probs();
  // reference: long double log-sum-exp along the diagonal j + (k - j) = k
  real top = ninf;
  for (std::int64_t j = k - ny; j <= nx; ++j)
    top = std::max(top, lx[j] + static_cast<real>(ly[k - j]));
  real s = 0;
  for (std::int64_t j = k - ny; j <= nx; ++j)
    s += std::exp(lx[j] + static_cast<real>(ly[k - j]) - top);
  const real log_s = top + std::log(s);
  CHECK(log_close<T>(marg::log_prob_sum(x, y, k), log_s, 4));
  const auto g = marg::log_prob_sum_grad(x, y, k);
  REQUIRE(g.first.size() == lx.size());
  REQUIRE(g.second.size() == ly.size());
  // each gradient is exp(l - log_s) with l a stored log-probability
  std::int64_t bad = 0, finite = 0;
  const auto expect = [&](T got, real l) {
    const real want = std::exp(l - log_s);
    const real tol = 8 * std::numeric_limits<T>::epsilon() * (1 + std::fabs(l - log_s));
    const bool ok = want > std::numeric_limits<T>::max() ? got == std::numeric_limits<T>::infinity()
                                                         : std::fabs(got - want) <= tol * want;
    finite += std::isfinite(got) && got > 0;
    if (!ok && bad++ < 5) {
      CAPTURE(l, want, got);
      CHECK(false);
    }
  };
  for (std::int64_t j = 0; j <= nx; ++j) {
    if (j < k - ny)
      CHECK(g.first[j] == 0);
    else
      expect(g.first[j], ly[k - j]);
  }
  for (std::int64_t i = 0; i <= ny; ++i) {
    if (i < k - nx)
      CHECK(g.second[i] == 0);
    else
      expect(g.second[i], lx[k - i]);
  }
  CHECK(bad == 0);
  CHECK(finite >= 3);
}

TEMPLATE_TEST_CASE("log space: categorical_log", "[distributions][log]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const auto x = marg::categorical_log<T>({T(-800), T(-801)}, 3);
  CHECK(x.lower() == 3);
  const real p0 = 1 / (1 + std::exp(real(-1)));
  CHECK(std::fabs(x.prob(3) - p0) <= 4 * std::numeric_limits<T>::epsilon());
  CHECK(std::fabs(x.prob(4) - (1 - p0)) <= 4 * std::numeric_limits<T>::epsilon());
  CHECK_FALSE(x.has_log_probs());
  // weights spanning e^-5000: kept as log-probabilities
  const T ninf_t = -std::numeric_limits<T>::infinity();
  const auto y = marg::categorical_log<T>({T(0), ninf_t, T(-5000)});
  CHECK(y.has_log_probs());
  CHECK(y.prob(1) == T(0));
  CHECK(y.log_prob(1) == ninf_t);
  CHECK(std::fabs(y.log_prob(2) + 5000) <= log_tolerance<T>(5000));
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(marg::categorical_log<T>({ninf_t, ninf_t}), Contains("are -inf"));
  CHECK_THROWS_WITH(marg::categorical_log<T>({T(0), std::numeric_limits<T>::quiet_NaN()}),
                    Contains("log_weights[1]"));
  CHECK_THROWS_AS(marg::categorical_log<T>({}), marg::invalid_argument);
}

TEMPLATE_TEST_CASE("log space: categorical_log of log-weights far from 0", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // weights c - j/4, exact in T: only their differences matter, so the
  // probabilities are exp(-j/4) / sum, however large |c| is
  for (const real c : {real(1e6), real(-1e6), real(3e5)}) {
    CAPTURE(c);
    std::vector<T> w(40);
    rvec want(w.size());
    real total = 0;
    for (std::size_t j = 0; j < w.size(); ++j) {
      w[j] = static_cast<T>(c - static_cast<real>(j) / 4);
      REQUIRE(static_cast<real>(w[j]) == c - static_cast<real>(j) / 4);
      want[j] = std::exp(-static_cast<real>(j) / 4);
      total += want[j];
    }
    const auto x = marg::categorical_log<T>(w);
    const std::vector<T> p = x.probs();
    real mass = 0;
    real worst = 0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      mass += p[j];
      worst = std::max(worst, std::fabs(p[j] - want[j] / total) / (want[j] / total));
    }
    CHECK(worst <= 2 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(mass - 1) <= 2 * std::numeric_limits<T>::epsilon());
  }
}

TEMPLATE_TEST_CASE("log space: a far-tail posterior sums to 1", "[distributions][log]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // X, Y ~ Binomial(n, p) with p far below T's range, X + Y = n: the
  // posterior of X is hypergeometric, C(n, j)^2 / C(2n, n), whatever p is,
  // while the log-likelihood is near 2n log p
  const T p = std::is_same_v<T, float> ? T(1e-30) : T(1e-300);
  for (const std::int64_t n : {50, 200, 400}) {
    CAPTURE(n);
    const auto x = marg::binomial<T>(n, p);
    const auto post = marg::condition_on_sum(x, x, n);
    REQUIRE(post.first.size() == n + 1);
    rvec want(static_cast<std::size_t>(n + 1));
    real top = ninf;
    for (std::int64_t j = 0; j <= n; ++j) {
      want[j] =
          2 * (std::lgamma(real(n + 1)) - std::lgamma(real(j + 1)) - std::lgamma(real(n - j + 1)));
      top = std::max(top, want[j]);
    }
    real total = 0;
    for (const real w : want) total += std::exp(w - top);
    const std::vector<T> got = post.first.probs();
    real mass = 0;
    real worst = 0;
    for (std::int64_t j = 0; j <= n; ++j) {
      mass += got[j];
      const real ref = std::exp(want[j] - top) / total;
      if (ref > std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon())
        worst = std::max(worst, std::fabs(got[j] - ref) / ref);
    }
    // the terms' log-probabilities, near n log p, are held in T: each is
    // within half an ulp, so a weight's log moves by up to eps n |log p|
    CHECK(worst <= 2 * std::numeric_limits<T>::epsilon() * n * std::fabs(std::log(real(p))));
    CHECK(std::fabs(mass - 1) <= 2 * std::numeric_limits<T>::epsilon());
  }
}

TEST_CASE("log space: the default tail keeps a count of 50 possible", "[distributions][log]") {
  // x ~ Poisson(3), y ~ Binomial(20, 1/4): P(x + y = 50) is about e^-67.6
  const auto x = marg::poisson(3.0);
  const auto y = marg::binomial(20, 0.25);
  CHECK(x.upper() >= 50);
  CHECK(x.truncated_mass() <= 1e-300);
  // reference: sum over y of Poisson(3) at 50 - j times Binomial at j, by recurrences
  const rvec py = ref_binomial(20, 0.25L), px = ref_poisson(3.0L, 50);
  real s = 0;
  for (std::int64_t j = 0; j <= 20; ++j) s += px[50 - j] * py[j];
  const real want = std::log(s);
  CAPTURE(want);
  CHECK(std::fabs(marg::log_prob_sum(x, y, 50) - want) <= 1e-10L);
  CHECK(std::fabs(want + 67.59L) < 0.01L);
}
