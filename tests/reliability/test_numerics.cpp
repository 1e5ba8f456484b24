// Numerical robustness: denormal and 1e-300 probabilities, 10,000 chained
// sums (normalization drift measured and bounded), leading and trailing
// zeros, prob/log_prob/cdf at and beyond the edges of extreme supports,
// non-finite values in the numeric layer (garbage in, garbage out, but only
// inside the problem that holds them). Moderate supports, factory tails and
// accessor accuracy are in tests/distributions/test_pmf.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "reliability_fixture.hpp"

using namespace marg::test;
using namespace marg::test::rel;

namespace {

template <class T>
constexpr T eps() {
  return std::numeric_limits<T>::epsilon();
}

}  // namespace

TEMPLATE_TEST_CASE("numerics: denormal and tiny probabilities", "[reliability][numerics]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const T dmin = std::numeric_limits<T>::denorm_min(), nmin = std::numeric_limits<T>::min();
  // banded products with subnormal, tiny-normal and ordinary elements mixed
  for (const int m : {1, 7, 64, 257}) {
    const int n = random_size(g, 300);
    std::vector<T> p = random_positive<T>(g, m, shape::scattered);
    std::vector<T> q = random_positive<T>(g, n, shape::uniform);
    for (int i = 0; i < m; i += 2) p[i] = (i % 4 == 0) ? dmin * T(1 + i % 7) : nmin * T(0.25);
    for (int i = 1; i < n; i += 3) q[i] = nmin * T(3);
    for (const op o : all_ops) {
      const lengths len = lengths_of(o, m, n);
      // the first operand of the gradients is g over m + n - 1: reuse p and q cyclically
      std::vector<T> a(len.a), b(len.b);
      for (std::int64_t i = 0; i < len.a; ++i) a[i] = o == op::convolve ? p[i] : q[i % n];
      for (std::int64_t i = 0; i < len.b; ++i) b[i] = o == op::grad_q ? p[i] : q[i % n];
      std::vector<T> out(len.out, T(-1));
      call<T>(o, m, n, a.data(), 1, b.data(), 1, out.data(), 1);
      const rvec want = reference(o, m, n, widen(a), widen(b));
      int bad = 0;
      for (std::size_t i = 0; i < out.size(); ++i)
        if (!within_subnormal_bound<T>(out[i], want[i], std::max(m, n))) ++bad;
      INFO(name_of(o) << " m = " << m << " n = " << n);
      CHECK(bad == 0);
    }
  }
  // categorical from weights that are all subnormal or all huge: normalized in long double
  {
    const auto x = marg::categorical<T>({dmin, 3 * dmin});
    CHECK(std::fabs(x.prob(0) - T(0.25)) <= eps<T>());
    CHECK(std::fabs(x.prob(1) - T(0.75)) <= eps<T>());
    const T big = std::numeric_limits<T>::max();
    const auto y = marg::categorical<T>({big, big, big, big});
    CHECK(y.prob(2) == T(0.25));
  }
  // probabilities near the bottom of the range of T: 1e-300 (double), 1e-30 (float)
  const T tiny = std::is_same_v<T, double> ? T(1e-300) : T(1e-30);
  const auto x = marg::categorical<T>({tiny, 1, tiny});
  const real px0 = static_cast<real>(tiny) / (1 + 2 * static_cast<real>(tiny));
  CHECK(relative_error(x.prob(0), px0) <= tolerance<T>());
  CHECK(relative_error(x.log_prob(0), std::log(px0)) <= tolerance<T>());
  // P(x + x = 0) = px0^2 is below the range of T: x + x stores 0 there, but
  // log_prob_sum, condition_on_sum and log_prob_sum_grad sum in long double
  const auto xx = x + x;
  CHECK(xx.prob(0) >= 0);
  CHECK(relative_error(xx.prob(1), 2 * px0 * (1 - 2 * px0)) <= tolerance<T>());
  const real ll = 2 * std::log(px0);
  CHECK(relative_error(marg::log_prob_sum(x, x, 0), ll) <= tolerance<T>());
  const auto post = marg::condition_on_sum(x, x, 0);
  CHECK(relative_error(post.log_likelihood, ll) <= tolerance<T>());
  REQUIRE(post.first.size() == 1);
  CHECK(post.first.prob(0) == 1);
  const auto grad = marg::log_prob_sum_grad(x, x, 0);
  for (T v : grad.first) CHECK(std::isfinite(v));
  // soft evidence uniformly tiny: the posterior is the prior's, the log
  // likelihood log(tiny)
  const auto y = marg::categorical<T>(random_positive<T>(g, 9, shape::uniform));
  const std::vector<T> small_l(x.size() + y.size() - 1, tiny), ones(small_l.size(), T(1));
  const auto soft = marg::condition_on_sum(x, y, small_l);
  const auto plain = marg::condition_on_sum(x, y, ones);
  CHECK(relative_error(soft.log_likelihood, std::log(static_cast<real>(tiny))) <= tolerance<T>());
  CHECK(compare(soft.second.probs(), widen_pmf(plain.second), tolerance<T>()).failures == 0);
  // log evidence far below the range of T (the maximum is factored out)
  const std::vector<T> log_l(small_l.size(), T(-1e5));
  const auto deep = marg::condition_on_sum_log(x, y, log_l);
  CHECK(relative_error(deep.log_likelihood, -1e5L) <= tolerance<T>());
  CHECK(compare(deep.second.probs(), widen_pmf(plain.second), tolerance<T>()).failures == 0);
}

TEMPLATE_TEST_CASE("numerics: 10,000 chained sums keep their mass and accuracy",
                   "[reliability][numerics]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  constexpr int steps = 10000;
  // a Poisson-binomial: x_{k+1} = x_k + Bernoulli(p_k), p_k in [0.05, 0.95]
  std::vector<marg::pmf<T>> terms;
  std::vector<real> ps;
  std::uniform_real_distribution<double> u(0.05, 0.95);
  for (int k = 0; k < steps; ++k) {
    ps.push_back(static_cast<T>(u(g)));
    terms.push_back(marg::bernoulli<T>(static_cast<T>(ps.back())));
  }
  // reference: the DP in long double on the same (rounded) p_k
  rvec want{1.0L};
  for (int k = 0; k < steps; ++k) {
    const real p = terms[k].prob(1), q = terms[k].prob(0);
    want.push_back(0);
    for (std::size_t i = want.size() - 1; i > 0; --i) want[i] = want[i] * q + want[i - 1] * p;
    want[0] *= q;
  }
  // chained: drift of the total after every step
  marg::pmf<T> x = marg::delta<T>(0);
  real max_drift = 0;
  for (int k = 0; k < steps; ++k) {
    x = x + terms[k];
    real s = 0;
    for (T v : x.probs()) s += v;
    max_drift = std::max(max_drift, std::fabs(s - 1));
  }
  const auto tree = marg::sum(terms);
  real s_tree = 0;
  for (T v : tree.probs()) s_tree += v;
  // relative error over the elements above a floor (the outer tails fall
  // below the range of T: P(all succeed) ~ 0.5^10000)
  const real floor = std::is_same_v<T, double> ? 1e-250L : 1e-25L;
  auto worst = [&](const marg::pmf<T>& r) {
    real w = 0;
    const auto pr = r.probs();
    for (std::size_t i = 0; i < want.size(); ++i)
      if (want[i] > floor) w = std::max(w, relative_error(pr[i], want[i]));
    return w;
  };
  const real chain_err = worst(x), tree_err = worst(tree);
  std::printf(
      "chained sums (%s, %s): %d steps, max |mass - 1| = %.3Lg (%.2Lf eps), "
      "final chain rel err %.3Lg (%.0Lf eps), balanced tree rel err %.3Lg, |mass - 1| %.3Lg\n",
      sizeof(T) == 4 ? "float" : "double", TestType::b == marg::backend::cpu ? "cpu" : "cuda",
      steps, max_drift, max_drift / eps<T>(), chain_err, chain_err / eps<T>(), tree_err,
      std::fabs(s_tree - 1));
  CAPTURE(max_drift, chain_err, tree_err);
  CHECK(x.size() == steps + 1);
  // the documented renormalization keeps every stored total within 16 eps of 1
  CHECK(max_drift <= 16 * eps<T>());
  CHECK(std::fabs(s_tree - 1) <= 16 * eps<T>());
  // each chained step adds at most ~2 eps relative error per element (two
  // non-negative terms) plus a renormalization: bound 4 eps per step
  CHECK(chain_err <= 4 * steps * eps<T>());
  CHECK(tree_err <= 4 * steps * eps<T>());
}

TEMPLATE_TEST_CASE("numerics: leading and trailing zeros are kept and never sampled",
                   "[reliability][numerics]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  std::vector<T> w = random_positive<T>(g, 12, shape::uniform);
  w[0] = w[1] = w[2] = w[10] = w[11] = 0;  // 3 leading, 2 trailing zeros
  w[6] = 0;                                // and one inside
  const std::int64_t lower = uniform_int(g, -100, 100);
  const auto x = marg::categorical<T>(w, lower);
  // categorical keeps the support as given
  CHECK(x.lower() == lower);
  CHECK(x.size() == 12);
  for (const int i : {0, 1, 2, 6, 10, 11}) {
    CHECK(x.prob(lower + i) == 0);
    CHECK(x.log_prob(lower + i) == -std::numeric_limits<T>::infinity());
  }
  CHECK(x.cdf(lower + 2) == 0);
  CHECK(std::fabs(x.cdf(lower + 9) - 1) <= 4 * eps<T>());
  CHECK(x.cdf(lower + 10) == 1);
  // sampling never returns a zero-probability value, at the ends of [0, 1) too
  CHECK(x.sample_index(0.0) == 3);
  CHECK(x.sample_index(std::nextafter(1.0, 0.0)) == 9);
  for (int k = 0; k < 2000; ++k) CHECK(x.prob(x.sample(g)) > 0);
  // sums keep the zero ends exactly (0 * anything is 0 in every kernel)
  const auto y = marg::categorical<T>({0, 1, 2, 0});
  const auto z = x + y;
  CHECK(z.size() == 15);
  CHECK(z.lower() == lower);
  for (const int i : {0, 1, 2, 3, 13, 14}) CHECK(z.prob(lower + i) == 0);
  std::int64_t ref_lower = 0;
  const rvec want = ref_sum(std::vector<marg::pmf<T>>{x, y}, ref_lower);
  CHECK(compare(z.probs(), want, tolerance<T>()).failures == 0);
  // moments ignore the zeros
  real mean = 0;
  for (int i = 0; i < 12; ++i) mean += (lower + i) * static_cast<real>(x.prob(lower + i));
  CHECK(std::fabs(x.mean() - mean) <= 8 * eps<T>() * (std::fabs(mean) + 1));
  // posteriors are trimmed to their positive values
  const auto post = marg::condition_on_sum(x, y, lower + 6);
  CHECK(post.first.prob(post.first.lower()) > 0);
  CHECK(post.first.prob(post.first.upper()) > 0);
  CHECK(post.first.lower() >= lower + 3);
}

TEMPLATE_TEST_CASE("numerics: prob log_prob and cdf at and beyond the edges of extreme supports",
                   "[reliability][numerics]", float, double) {
  using T = TestType;
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> w{1, 2, 3, 4};
  for (const std::int64_t lower : {INT64_MIN, INT64_MIN + 1, std::int64_t{-2}, INT64_MAX - 3}) {
    CAPTURE(lower);
    const auto x = marg::categorical<T>(w, lower);
    const std::int64_t upper = lower + 3;
    REQUIRE(x.upper() == upper);
    std::vector<std::int64_t> outside{INT64_MIN, INT64_MAX};
    if (lower > INT64_MIN) outside.push_back(lower - 1);
    if (upper < INT64_MAX) outside.push_back(upper + 1);
    for (const std::int64_t k : outside) {
      if (k >= lower && k <= upper) continue;
      CAPTURE(k);
      CHECK(x.prob(k) == 0);
      CHECK(x.log_prob(k) == -inf);
      CHECK(x.cdf(k) == (k < lower ? 0 : 1));
    }
    CHECK(std::fabs(x.prob(lower) - T(0.1)) <= eps<T>());
    CHECK(std::fabs(x.cdf(lower) - T(0.1)) <= eps<T>());
    CHECK(std::fabs(x.prob(upper) - T(0.4)) <= eps<T>());
    CHECK(x.cdf(upper) == 1);
    CHECK(std::fabs(x.log_prob(upper) - std::log(T(0.4))) <= 2 * eps<T>());
    // moments relative to lower: finite and right
    const real mean = static_cast<real>(lower) + 2;  // 0.1*0 + 0.2*1 + 0.3*2 + 0.4*3 = 2
    CHECK(std::fabs(x.mean() - mean) <= eps<T>() * std::fabs(mean) + 8 * eps<T>());
    CHECK(std::fabs(x.variance() - T(1)) <= 8 * eps<T>());
    marg::test::rng g(static_cast<std::uint64_t>(lower));
    for (int k = 0; k < 100; ++k) {
      const std::int64_t v = x.sample(g);
      CHECK((v >= lower && v <= upper));
    }
    // observations far outside the support of x + x (or of x + delta(0)) are impossible
    const auto zero = marg::delta<T>(0);
    for (const std::int64_t k : {INT64_MIN, INT64_MAX}) {
      if (k >= lower && k <= upper) continue;
      CHECK(marg::log_prob_sum(x, zero, k) == -inf);
      const auto post = marg::condition_on_sum(x, zero, k);
      CHECK(post.log_likelihood == -inf);
      CHECK(post.first.empty());
      CHECK(post.second.empty());
    }
  }
  // point masses at both ends of int64
  for (const std::int64_t k : {INT64_MIN, INT64_MAX}) {
    const auto d = marg::delta<T>(k);
    CHECK(d.prob(k) == 1);
    CHECK(d.log_prob(k) == 0);
    CHECK(d.cdf(k) == 1);
    CHECK(d.cdf(k == INT64_MIN ? INT64_MAX : INT64_MIN) == (k == INT64_MIN ? 1 : 0));
    CHECK(static_cast<real>(d.mean()) == static_cast<real>(static_cast<T>(k)));
    CHECK(d.variance() == 0);
  }
}

TEMPLATE_TEST_CASE("numerics: NaN and inf inputs of the numeric layer stay in their problem",
                   "[reliability][numerics]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // the numeric layer is BLAS-like: it does not scan its inputs. A NaN or inf
  // in one problem of a batch may spread to any output of that problem, never
  // to another problem and never outside the outputs.
  for (const op o : all_ops) {
    for (const T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity()}) {
      const int m = random_size(g, 200), n = random_size(g, 200), batch = 3;
      const lengths len = lengths_of(o, m, n);
      strided<T> a(memory::host, len.a, 1, len.a + 1, batch),
          b(memory::host, len.b, 2, 2 * len.b, batch);
      strided<T> out(memory::pool, len.out, 1, len.out + 2, batch);
      std::vector<std::vector<T>> va, vb;
      for (int k = 0; k < batch; ++k) {
        va.push_back(random_positive<T>(g, len.a, shape::uniform));
        vb.push_back(random_positive<T>(g, len.b, shape::uniform));
      }
      va[1][uniform_int(g, 0, len.a - 1)] = bad;
      for (int k = 0; k < batch; ++k) {
        a.set(k, va[k]);
        b.set(k, vb[k]);
      }
      call_batched<T>(o, m, n, a.data(), 1, len.a + 1, b.data(), 2, 2 * len.b, out.data(), 1,
                      len.out + 2, batch);
      INFO(name_of(o) << " m = " << m << " n = " << n << " bad = " << bad);
      for (const int k : {0, 2})
        CHECK(compare(out.get(k), reference(o, m, n, widen(va[k]), widen(vb[k])), tolerance<T>())
                  .failures == 0);
      CHECK(out.stray_writes() == 0);
    }
  }
}
