// Observation of x + y: likelihood, posteriors (hard and soft evidence),
// gradients and sampling, against brute-force enumeration of the joint in
// long double, on both backends, float and double.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test::dist;

namespace {

template <class T>
real rel_tol() {
  return std::is_same_v<T, double> ? 1e-12L : 1e-5L;
}

// a random pmf of length len on lower.. with a wide dynamic range
template <class T>
marg::pmf<T> random_pmf(marg::test::rng& g, int len, std::int64_t lower) {
  return marg::categorical<T>(marg::test::random_positive<T>(g, len, marg::test::shape::scattered),
                              lower);
}

// joint P(x = i, y = j) weights by value, brute force
template <class T>
std::map<std::int64_t, real> ref_marginal(const marg::pmf<T>& x, const marg::pmf<T>& y,
                                          const std::vector<real>& L, bool of_x) {
  std::map<std::int64_t, real> w;
  const std::int64_t base = x.lower() + y.lower();
  for (std::int64_t i = x.lower(); i <= x.upper(); ++i)
    for (std::int64_t j = y.lower(); j <= y.upper(); ++j)
      w[of_x ? i : j] += static_cast<real>(x.prob(i)) * y.prob(j) * L[i + j - base];
  return w;
}

template <class T>
void check_posterior(const marg::pmf<T>& got, const std::map<std::int64_t, real>& w) {
  real s = 0;
  for (const auto& [k, v] : w) s += v;
  for (const auto& [k, v] : w) {
    const real want = v / s;
    CAPTURE(k);
    if (want == 0) {
      CHECK(got.prob(k) == 0);
    } else {
      CHECK(std::fabs(got.prob(k) - want) <= rel_tol<T>() * want);
    }
  }
}

const std::pair<int, int> sizes[] = {{1, 1}, {1, 7}, {7, 1}, {5, 13}, {13, 5}, {31, 29}, {64, 3}};

}  // namespace

TEMPLATE_TEST_CASE("conditioning: log_prob_sum equals log((x + y).prob(k))", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const auto& [m, n] : sizes) {
    CAPTURE(m, n);
    const auto x = random_pmf<T>(g, m, marg::test::uniform_int(g, -20, 20));
    const auto y = random_pmf<T>(g, n, marg::test::uniform_int(g, -20, 20));
    const auto z = x + y;
    for (std::int64_t k = z.lower() - 2; k <= z.upper() + 2; ++k) {
      CAPTURE(k);
      const T got = marg::log_prob_sum(x, y, k);
      if (z.prob(k) == 0) {
        CHECK(got == -std::numeric_limits<T>::infinity());
      } else {
        CHECK(std::fabs(got - std::log(z.prob(k))) <=
              64 * std::numeric_limits<T>::epsilon() * (1 + std::fabs(got)));
      }
    }
  }
  // products below the range of T still count (summed in long double)
  const auto tiny = marg::binomial<T>(std::is_same_v<T, double> ? 1000 : 120, T(0.5));
  const T lp = marg::log_prob_sum(tiny, tiny, 0);
  CHECK(lp == Approx(2 * static_cast<double>(tiny.log_prob(0))).epsilon(1e-5));
}

TEMPLATE_TEST_CASE("conditioning: hard evidence posteriors against the joint", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const auto& [m, n] : sizes) {
    const auto x = random_pmf<T>(g, m, marg::test::uniform_int(g, -20, 20));
    const auto y = random_pmf<T>(g, n, marg::test::uniform_int(g, -20, 20));
    const std::int64_t lo = x.lower() + y.lower(), hi = x.upper() + y.upper();
    for (std::int64_t k = lo; k <= hi; ++k) {
      CAPTURE(m, n, k);
      std::vector<real> L(hi - lo + 1, 0);
      L[k - lo] = 1;
      const auto post = marg::condition_on_sum(x, y, k);
      CHECK(post.log_likelihood == Approx(static_cast<double>(marg::log_prob_sum(x, y, k))));
      check_posterior(post.first, ref_marginal(x, y, L, true));
      check_posterior(post.second, ref_marginal(x, y, L, false));
      // posterior supports are trimmed to the feasible values
      CHECK(post.first.lower() + post.second.upper() == k);
      CHECK(post.first.upper() + post.second.lower() == k);
    }
  }
}

TEMPLATE_TEST_CASE("conditioning: impossible observations give -inf and empty posteriors",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const auto x = marg::categorical<T>({1, 0, 1}, 0);  // 0 or 2
  const auto y = marg::categorical<T>({1, 0, 1}, 0);
  for (const std::int64_t k : std::vector<std::int64_t>{-1, 1, 3, 5, INT64_MAX, INT64_MIN}) {
    CAPTURE(k);
    CHECK(marg::log_prob_sum(x, y, k) == -std::numeric_limits<T>::infinity());
    const auto post = marg::condition_on_sum(x, y, k);
    CHECK(post.log_likelihood == -std::numeric_limits<T>::infinity());
    CHECK(post.first.empty());
    CHECK(post.second.empty());
    CHECK_THROWS_WITH(post.first.prob(0), Catch::Contains("impossible observation"));
    std::mt19937_64 g(1);
    CHECK_THROWS_AS(post.second.sample(g), marg::invalid_argument);
    CHECK_THROWS_AS(marg::sample_given_sum(x, y, k, g), marg::invalid_argument);
    CHECK_THROWS_WITH(marg::log_prob_sum_grad(x, y, k), Catch::Contains("impossible"));
  }
  const std::vector<T> L{0, 1, 0, 1, 0};  // evidence only on odd sums
  const auto soft = marg::condition_on_sum(x, y, L);
  CHECK(soft.log_likelihood == -std::numeric_limits<T>::infinity());
  CHECK(soft.first.empty());
  CHECK(marg::sum_given_evidence(x, y, L).empty());
}

TEMPLATE_TEST_CASE("conditioning: soft evidence posteriors against the joint", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const auto& [m, n] : sizes) {
    CAPTURE(m, n);
    const auto x = random_pmf<T>(g, m, marg::test::uniform_int(g, -20, 20));
    const auto y = random_pmf<T>(g, n, marg::test::uniform_int(g, -20, 20));
    const auto Lt = marg::test::random_positive<T>(g, m + n - 1, marg::test::shape::uniform);
    const std::vector<real> L = marg::test::widen(Lt);
    const auto post = marg::condition_on_sum(x, y, Lt);
    real like = 0;
    for (const auto& [k, v] : ref_marginal(x, y, L, true)) like += v;
    CHECK(std::fabs(post.log_likelihood - std::log(like)) <= rel_tol<T>() * 10);
    check_posterior(post.first, ref_marginal(x, y, L, true));
    check_posterior(post.second, ref_marginal(x, y, L, false));
    // the same evidence in log space, shifted far below the range of T
    std::vector<T> logL(Lt.size());
    const T shift = std::is_same_v<T, double> ? T(-2000) : T(-300);
    for (std::size_t i = 0; i < Lt.size(); ++i) logL[i] = std::log(Lt[i]) + shift;
    const auto post2 = marg::condition_on_sum_log(x, y, logL);
    CHECK(post2.log_likelihood == Approx(static_cast<double>(post.log_likelihood + shift)));
    // the reference evidence is what logL holds (its rounding is the input's, not ours)
    std::vector<real> L2(logL.size());
    for (std::size_t i = 0; i < logL.size(); ++i)
      L2[i] = std::exp(static_cast<real>(logL[i]) - shift);
    check_posterior(post2.first, ref_marginal(x, y, L2, true));
    check_posterior(post2.second, ref_marginal(x, y, L2, false));
  }
}

TEMPLATE_TEST_CASE("conditioning: samples against the pmf (chi-square and fixed seed)",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  std::mt19937_64 g(20240611);
  const int draws = 100000;
  // a pmf with zeros inside and a long tail
  const auto x = marg::categorical<T>({0, 3, 1, 0, 5, 2, 0.01f, 0.001f}, -3);
  std::vector<std::int64_t> counts(x.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const std::int64_t v = x.sample(g);
    REQUIRE(x.prob(v) > 0);
    ++counts[v - x.lower()];
  }
  int dof;
  const real stat = chi_square(counts, marg::test::widen(x.probs()), draws, dof);
  CAPTURE(stat, dof);
  CHECK(stat < chi_square_bound(dof));
  // joint draws of (x, y) given x + y = k against the hard-evidence posterior by enumeration
  const auto a = marg::binomial<T>(12, T(0.4)), b = marg::poisson<T>(T(3), T(1e-7));
  const std::int64_t k = 9;
  std::vector<std::int64_t> cx(a.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const auto [u, v] = marg::sample_given_sum(a, b, k, g);
    REQUIRE(u + v == k);
    ++cx[u];
  }
  rvec want(a.size(), 0);
  real s = 0;
  for (std::int64_t j = 0; j <= 12; ++j)
    s += want[j] = static_cast<real>(a.prob(j)) * b.prob(k - j);
  for (auto& w : want) w /= s;
  const real stat2 = chi_square(cx, want, draws, dof);
  CAPTURE(stat2, dof);
  CHECK(stat2 < chi_square_bound(dof));
  // draws of the sum under soft evidence
  std::vector<T> L(a.size() + b.size() - 1);
  for (std::size_t i = 0; i < L.size(); ++i)
    L[i] = static_cast<T>(std::exp(-0.1 * (i - 8.0) * (i - 8.0)));
  const auto zs = marg::sum_given_evidence(a, b, L);
  const auto z = a + b;
  std::vector<std::int64_t> cz(L.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const auto [u, v] = marg::sample_given_evidence(a, b, L, g);
    ++cz[u + v];
  }
  rvec wz(L.size());
  s = 0;
  for (std::size_t i = 0; i < L.size(); ++i) s += wz[i] = static_cast<real>(z.prob(i)) * L[i];
  for (std::size_t i = 0; i < L.size(); ++i) {
    wz[i] /= s;
    CHECK(std::fabs(zs.prob(static_cast<std::int64_t>(i)) - wz[i]) <=
          rel_tol<T>() * 10 * wz[i] + 1e-30);
  }
  const real stat3 = chi_square(cz, wz, draws, dof);
  CAPTURE(stat3, dof);
  CHECK(stat3 < chi_square_bound(dof));
}

TEMPLATE_TEST_CASE("gradients: sum_grad and log_prob_sum_grad against finite differences",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const auto& [m, n] : sizes) {
    CAPTURE(m, n);
    // well-conditioned operands (one order of magnitude) so that central
    // differences are accurate
    const auto x = marg::categorical<T>(
        marg::test::random_positive<T>(g, m, marg::test::shape::uniform), -5 + m % 7);
    const auto y = marg::categorical<T>(
        marg::test::random_positive<T>(g, n, marg::test::shape::uniform), 3 - n % 5);
    const rvec p = marg::test::widen(x.probs()), q = marg::test::widen(y.probs());
    // f(p, q) = sum_i w_i log r_i, nonlinear in r; df/dr_i = w_i / r_i
    const rvec w =
        marg::test::widen(marg::test::random_positive<T>(g, m + n - 1, marg::test::shape::uniform));
    auto f = [&](const rvec& pp, const rvec& qq) {
      const rvec r = marg::test::ref_convolve(pp, qq);
      real s = 0;
      for (std::size_t i = 0; i < r.size(); ++i) s += w[i] * std::log(r[i]);
      return s;
    };
    const rvec r = marg::test::ref_convolve(p, q);
    std::vector<T> gr(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) gr[i] = static_cast<T>(w[i] / r[i]);
    const auto grad = marg::sum_grad(x, y, gr);
    const std::int64_t k = x.lower() + y.lower() + (m + n - 1) / 2;
    const auto lgrad = marg::log_prob_sum_grad(x, y, k);
    auto lf = [&](const rvec& pp, const rvec& qq) {
      return std::log(marg::test::ref_convolve(pp, qq)[k - x.lower() - y.lower()]);
    };
    const real h = 1e-7L;
    for (int side = 0; side < 2; ++side) {
      const rvec& base = side == 0 ? p : q;
      for (std::size_t j = 0; j < base.size(); ++j) {
        CAPTURE(side, j);
        rvec up = base, dn = base;
        const real step = h * base[j];
        up[j] += step;
        dn[j] -= step;
        const real fd =
            side == 0 ? (f(up, q) - f(dn, q)) / (2 * step) : (f(p, up) - f(p, dn)) / (2 * step);
        const real got = side == 0 ? grad.first[j] : grad.second[j];
        CHECK(std::fabs(got - fd) <=
              (std::is_same_v<T, double> ? 1e-6L : 1e-3L) * (std::fabs(fd) + 1e-3L));
        const real lfd =
            side == 0 ? (lf(up, q) - lf(dn, q)) / (2 * step) : (lf(p, up) - lf(p, dn)) / (2 * step);
        const real lgot = side == 0 ? lgrad.first[j] : lgrad.second[j];
        CHECK(std::fabs(lgot - lfd) <=
              (std::is_same_v<T, double> ? 1e-6L : 1e-3L) * (std::fabs(lfd) + 1e-3L));
      }
    }
  }
}
