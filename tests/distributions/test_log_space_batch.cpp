// pmf_batch rows below T's range: batches keep log-probabilities, and the
// batched sums, log_prob_sum, conditioning and sum_grad are exact on those
// rows while the linear rows take the linear path bit for bit. References are
// lgamma closed forms convolved in long double log space, and plain long
// double loops, never the library's formulas.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test;
using namespace marg::test::dist;

namespace {

constexpr real ninf = -std::numeric_limits<real>::infinity();

// log Binomial(n, p) by the lgamma closed form, long double
rvec lgamma_binomial(std::int64_t n, real p) {
  rvec r(static_cast<std::size_t>(n + 1));
  for (std::int64_t k = 0; k <= n; ++k)
    r[k] = std::lgamma(static_cast<real>(n + 1)) - std::lgamma(static_cast<real>(k + 1)) -
           std::lgamma(static_cast<real>(n - k + 1)) + k * std::log(p) + (n - k) * std::log1p(-p);
  return r;
}

// log-sum-exp of v (-inf when every term is)
real lse(const rvec& v) {
  real top = ninf;
  for (const real u : v) top = std::max(top, u);
  if (top == ninf) return ninf;
  real s = 0;
  for (const real u : v) s += std::exp(u - top);
  return top + std::log(s);
}

// r_s = log sum_j exp(a_j + b_{s-j}), long double
rvec log_conv(const rvec& a, const rvec& b) {
  rvec r(a.size() + b.size() - 1, ninf), terms;
  for (std::size_t s = 0; s < r.size(); ++s) {
    terms.clear();
    const std::size_t j0 = s >= b.size() ? s - b.size() + 1 : 0;
    for (std::size_t j = j0; j <= std::min(s, a.size() - 1); ++j) terms.push_back(a[j] + b[s - j]);
    r[s] = lse(terms);
  }
  return r;
}

// the stored log-probabilities of row b of a batch, long double
template <class T>
rvec stored_logs(const marg::pmf_batch<T>& x, int b) {
  rvec r(static_cast<std::size_t>(x.length()));
  for (int i = 0; i < x.length(); ++i) r[i] = x.log_prob(b, x.lowers()[b] + i);
  return r;
}

// The test batches: row b is Binomial(n_b, p_b), with n_b cycling through a
// count whose ends are below T's range (the row keeps log-probabilities), a
// short one that fits T, and one that fits T whose products with the other
// batch's rows do not (the sum needs log space without either term keeping
// logs).
template <class T>
struct rows {
  std::vector<std::int64_t> n;
  std::vector<double> p;
  std::vector<marg::pmf<T>> pmfs;
  rvec ref(int b) const { return lgamma_binomial(n[b], static_cast<real>(static_cast<T>(p[b]))); }
};

template <class T>
rows<T> make_rows(int B, std::int64_t big, marg::test::rng& g, double lo, double hi) {
  // float: 2^-70 fits, 2^-140 does not; double: 2^-600 and 2^-1200
  const std::int64_t mid = sizeof(T) == 4 ? 70 : 600;
  std::uniform_real_distribution<double> u(lo, hi);
  rows<T> r;
  for (int b = 0; b < B; ++b) {
    const int kind = b % 4;
    const std::int64_t n = kind == 1 ? 40 : kind == 2 ? mid : big;
    // the short rows' p away from 0 and 1: their values fit T
    const double p = kind == 2 ? 0.5 : kind == 1 ? 0.3 + 0.4 * (u(g) - lo) / (hi - lo) : u(g);
    r.n.push_back(n);
    r.p.push_back(p);
    r.pmfs.push_back(marg::binomial<T>(n, static_cast<T>(p)));
  }
  return r;
}

// every element of row b of s against want (padded with -inf) within
// log_tolerance (plus `ulps` for inputs rounded to T); returns the largest
// error as a multiple of the tolerance
template <class T>
real check_row(const marg::pmf_batch<T>& s, int b, const rvec& want, real ulps, std::int64_t& bad) {
  real worst = 0;
  for (int i = 0; i < s.length(); ++i) {
    const real w = i < static_cast<int>(want.size()) ? want[i] : ninf;
    const real got = s.log_prob(b, s.lowers()[b] + i);
    if (w == ninf) {
      if (got != ninf && bad++ < 5) {
        CAPTURE(b, i, got);
        CHECK(false);
      }
      continue;
    }
    const real e = std::fabs(got - w) / log_tolerance<T>(w, ulps);
    worst = std::max(worst, std::isfinite(got) ? e : INFINITY);
    if (!log_close<T>(got, w, ulps) && bad++ < 5) {
      CAPTURE(b, i, w, got);
      CHECK(false);
    }
  }
  return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("log space batch: 64 rows of Binomial(1000, p_b) + Binomial(1000, q_b)",
                   "[distributions][log][batch]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(g);
  const int B = 64;
  // float: Binomial(1000, p) ends below 1e-38; double: Binomial(1100, p) below 1e-308
  const std::int64_t big = sizeof(T) == 4 ? 1000 : 1100;
  const rows<T> xr = make_rows<T>(B, big, g, 0.02, 0.98), yr = make_rows<T>(B, big, g, 0.02, 0.98);
  const marg::pmf_batch<T> x(xr.pmfs), y(yr.pmfs);
  REQUIRE(x.has_log_probs());
  for (int b = 0; b < B; ++b) CHECK(x.row_has_log_probs(b) == (b % 4 == 0 || b % 4 == 3));
  const auto s = x + y;
  REQUIRE(s.has_log_probs());
  std::int64_t bad = 0;
  real worst = 0;
  for (int b = 0; b < B; ++b)
    worst = std::max(worst, check_row(s, b, log_conv(xr.ref(b), yr.ref(b)), 2, bad));
  CHECK(bad == 0);
  CAPTURE(worst);
  CHECK(worst <= 1);
  // rows as pmfs keep their log-probabilities
  const marg::pmf<T> r0 = s.row(0);
  CHECK(r0.has_log_probs());
  CHECK(std::isfinite(static_cast<double>(r0.log_prob(r0.lower()))));
  // the difference: the rows of y reversed, with their log-probabilities
  const auto d = x - y;
  CHECK(d.has_log_probs());
  for (int b = 0; b < B; b += 5) {
    const rvec ry = yr.ref(b);
    const rvec want = log_conv(xr.ref(b), rvec(ry.rbegin(), ry.rend()));
    // d's row b starts at -upper of y's padded row: shift the reference
    const std::int64_t first = 0 - yr.n[b];
    const std::int64_t off = first - d.lowers()[b];
    rvec shifted(static_cast<std::size_t>(off), ninf);
    shifted.insert(shifted.end(), want.begin(), want.end());
    worst = std::max(worst, check_row(d, b, shifted, 2, bad));
  }
  CHECK(bad == 0);
}

TEMPLATE_TEST_CASE("log space batch: one pmf added to every row", "[distributions][log][batch]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(g);
  const int B = 16;
  const rows<T> xr = make_rows<T>(B, 600, g, 0.05, 0.95);
  const marg::pmf_batch<T> x(xr.pmfs);
  // a common term whose ends are below T's range
  const std::int64_t ny = sizeof(T) == 4 ? 300 : 2000;
  const auto y = marg::binomial<T>(ny, T(0.3));
  REQUIRE(y.has_log_probs());
  const rvec ly = lgamma_binomial(ny, static_cast<real>(T(0.3)));
  const auto s = x + y;
  std::int64_t bad = 0;
  real worst = 0;
  for (int b = 0; b < B; ++b)
    worst = std::max(worst, check_row(s, b, log_conv(xr.ref(b), ly), 2, bad));
  CHECK(bad == 0);
  CAPTURE(worst);
  CHECK(worst <= 1);
}

TEMPLATE_TEST_CASE("log space batch: rows that fit T take the linear path bit for bit",
                   "[distributions][log][batch]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(g);
  // batches whose products stay in T's normal range: no logs, no log path
  const int B = 33;
  std::vector<std::int64_t> ns(B);
  std::vector<double> ps(B);
  std::uniform_real_distribution<double> u(0.1, 0.9);
  for (int b = 0; b < B; ++b) ns[b] = 5 + b, ps[b] = u(g);
  const auto x = marg::binomial_batch<T>(ns, ps);
  std::vector<marg::pmf<T>> yrows;
  for (int b = 0; b < B; ++b) yrows.push_back(marg::binomial<T>(10 + b % 3, T(0.4)));
  const marg::pmf_batch<T> y(yrows);
  CHECK(std::isfinite(x.log_floor()));
  CHECK(std::isfinite(y.log_floor()));
  const int m = x.length(), n = y.length();
  const auto same_as_convolve = [&](const marg::pmf_batch<T>& s, const T* q, int n,
                                    std::int64_t sq) {
    const int len = m + n - 1;
    marg::array<T> want(static_cast<std::size_t>(B) * len);
    marg::convolve_batched<T>(m, n, x.data(), 1, m, q, 1, sq, want.data(), 1, len, B);
    const T* w = &want[0];
    CHECK_FALSE(s.has_log_probs());
    REQUIRE(s.length() == len);
    CHECK(std::equal(w, w + static_cast<std::int64_t>(B) * len, s.data()));
  };
  same_as_convolve(x + y, y.data(), n, n);
  same_as_convolve(x + yrows[0], yrows[0].data(), static_cast<int>(yrows[0].size()), 0);
  // a batch with log rows leaves its linear rows as convolve_batched gives them
  std::vector<marg::pmf<T>> mixed(yrows);
  const std::int64_t big = sizeof(T) == 4 ? 1000 : 4000;
  mixed[3] = marg::binomial<T>(big, T(0.5));
  const marg::pmf_batch<T> ym(mixed);
  REQUIRE(ym.has_log_probs());
  const auto s = x + ym;
  CHECK(s.has_log_probs());
  const int nm = ym.length(), lm = m + nm - 1;
  marg::array<T> want(static_cast<std::size_t>(B) * lm);
  marg::convolve_batched<T>(m, nm, x.data(), 1, m, ym.data(), 1, nm, want.data(), 1, lm, B);
  const T* w = &want[0];
  for (int b = 0; b < B; ++b) {
    if (b == 3) continue;
    CAPTURE(b);
    CHECK(std::equal(w + std::int64_t{b} * lm, w + std::int64_t{b + 1} * lm,
                     s.data() + std::int64_t{b} * lm));
    CHECK_FALSE(s.row_has_log_probs(b));
  }
  CHECK(s.row_has_log_probs(3));
  // the sum's log floor lets the next sum stay linear without reading rows
  const auto s2 = x + y;
  CHECK(s2.log_floor() >= x.log_floor() + y.log_floor());
}

TEMPLATE_TEST_CASE("log space batch: log_prob_sum and hard conditioning in the far tails",
                   "[distributions][log][batch]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(g);
  const int B = 64;
  const rows<T> xr = make_rows<T>(B, 1000, g, 0.02, 0.98),
                yr = make_rows<T>(B, 1000, g, 0.02, 0.98);
  const marg::pmf_batch<T> x(xr.pmfs), y(yr.pmfs);
  // far-tail sums: near 0, near the top, and in the middle
  std::vector<std::int64_t> k(B);
  for (int b = 0; b < B; ++b) {
    const std::int64_t top = xr.n[b] + yr.n[b];
    k[b] = b % 3 == 0 ? b % 7 : b % 3 == 1 ? top - b % 5 : top / 2;
  }
  const std::vector<T> ll = marg::log_prob_sum(x, y, k);
  const auto post = marg::condition_on_sum(x, y, k);
  const std::vector<double> us = uniforms(g, 2 * static_cast<std::size_t>(B));
  const auto draws = marg::detail::sample_given_sum_with(x, y, k, us);
  std::int64_t bad = 0;
  real worst = 0, worst_post = 0;
  for (int b = 0; b < B; ++b) {
    // the stored log-probabilities of the rows: the reference sees T's rounding of the inputs
    const rvec lx = stored_logs(x, b), ly = stored_logs(y, b);
    rvec w;
    for (std::int64_t j = 0; j <= k[b]; ++j)
      if (j < x.length() && k[b] - j < y.length()) w.push_back(lx[j] + ly[k[b] - j]);
    const real total = lse(w);
    CAPTURE(b, k[b], total);
    REQUIRE(std::isfinite(total));
    CHECK(log_close<T>(ll[b], total, 4));
    CHECK(log_close<T>(post.log_likelihood[b], total, 4));
    worst = std::max(worst, std::fabs(ll[b] - total) / log_tolerance<T>(total, 4));
    // the joint draw: x_b by inversion of the posterior at us[2b] (up to T's
    // rounding of the cumulative sums at the boundaries)
    CHECK(log_close<T>(draws.log_likelihood[b], total, 4));
    CHECK(draws.first[b] + draws.second[b] == k[b]);
    real below = 0;  // P(x < drawn | k)
    for (std::int64_t j = 0; j < draws.first[b] - x.lowers()[b]; ++j)
      if (k[b] - j < y.length()) below += std::exp(lx[j] + ly[k[b] - j] - total);
    const std::int64_t jd = draws.first[b] - x.lowers()[b];
    const real at = std::exp(lx[jd] + ly[k[b] - jd] - total);
    CHECK(at > 0);
    CHECK(below <= us[2 * b] + 1e-4L);
    CHECK(below + at >= us[2 * b] - 1e-4L);
    // posterior of x_b: P(x = j | x + y = k) = exp(lx_j + ly_{k-j} - total), every j
    for (int j = 0; j < x.length(); ++j) {
      const std::int64_t i = k[b] - j;
      const real want = i >= 0 && i < y.length() ? lx[j] + ly[i] - total : ninf;
      const real got = post.first.log_prob(b, x.lowers()[b] + j);
      if (want == ninf) {
        if (got != ninf && bad++ < 5) CHECK(false);
        continue;
      }
      worst_post = std::max(worst_post, std::fabs(got - want) / log_tolerance<T>(want, 8));
      if (!log_close<T>(got, want, 8) && bad++ < 5) {
        CAPTURE(j, want, got);
        CHECK(false);
      }
      const real got_y = post.second.log_prob(b, y.lowers()[b] + i);
      if (!log_close<T>(got_y, want, 8) && bad++ < 5) {
        CAPTURE(j, want, got_y);
        CHECK(false);
      }
    }
  }
  CHECK(bad == 0);
  CAPTURE(worst, worst_post);
  CHECK(worst <= 1);
  CHECK(worst_post <= 1);
  CHECK(post.first.has_log_probs());
}

TEMPLATE_TEST_CASE("log space batch: soft evidence over far-tail sums",
                   "[distributions][log][batch]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(g);
  const int B = 12;
  const std::int64_t big = sizeof(T) == 4 ? 300 : 1500;
  const rows<T> xr = make_rows<T>(B, big, g, 0.1, 0.9), yr = make_rows<T>(B, 60, g, 0.2, 0.8);
  const marg::pmf_batch<T> x(xr.pmfs), y(yr.pmfs);
  const int m = x.length(), n = y.length(), len = m + n - 1;
  // evidence: a bump 3 wide at the top of each row's support (where the sum is
  // far below T's range for the long rows), as likelihood values in T
  std::vector<T> L(static_cast<std::size_t>(B) * len);
  for (int b = 0; b < B; ++b) {
    const std::int64_t top = xr.n[b] + yr.n[b];
    for (int i = 0; i < len; ++i) {
      const real z = (i - top) / 3.0L;
      L[std::int64_t{b} * len + i] = static_cast<T>(std::exp(-0.5L * z * z));
    }
  }
  const auto post = marg::condition_on_sum(x, y, L);
  const std::vector<double> us = uniforms(g, 2 * static_cast<std::size_t>(B));
  const auto draws = marg::detail::sample_given_evidence_with(x, y, L, us);
  // the same evidence held as a batch_evidence with per-row log scales
  marg::batch_evidence<T> e;
  e.batch = B;
  e.length = len;
  e.values = marg::array<T>(L.size());
  std::copy(L.begin(), L.end(), e.values.data());
  for (int b = 0; b < B; ++b) e.log_scale.push_back(-100.0 * b);
  const auto post_e = marg::condition_on_sum(x, y, e);
  const auto draws_e = marg::detail::sample_given_evidence_with(x, y, e, us);
  std::int64_t bad = 0;
  real worst = 0;
  rvec terms;
  for (int b = 0; b < B; ++b) {
    const rvec lx = stored_logs(x, b), ly = stored_logs(y, b);
    rvec ll(static_cast<std::size_t>(len));
    for (int i = 0; i < len; ++i) ll[i] = std::log(static_cast<real>(L[std::int64_t{b} * len + i]));
    // reference: w_j = log p_j + log sum_i q_i L_{j+i}, long double
    rvec wx(static_cast<std::size_t>(m));
    for (int j = 0; j < m; ++j) {
      terms.clear();
      for (int i = 0; i < n; ++i) terms.push_back(ly[i] + ll[j + i]);
      wx[j] = lx[j] + lse(terms);
    }
    const real total = lse(wx);
    CAPTURE(b, total);
    REQUIRE(std::isfinite(total));
    worst = std::max(worst, std::fabs(post.log_likelihood[b] - total) / log_tolerance<T>(total, 4));
    CHECK(log_close<T>(post.log_likelihood[b], total, 4));
    // the joint draw's weight is the same likelihood, and the drawn pair has
    // positive probability and positive evidence
    CHECK(log_close<T>(draws.log_likelihood[b], total, 4));
    const std::int64_t jx = draws.first[b] - x.lowers()[b], jy = draws.second[b] - y.lowers()[b];
    REQUIRE(jx >= 0);
    REQUIRE(jx < m);
    REQUIRE(jy >= 0);
    REQUIRE(jy < n);
    CHECK(std::isfinite(lx[jx] + ly[jy] + ll[jx + jy]));
    // with the scale: the log likelihood moves by it, the draws stay
    CHECK(log_close<T>(post_e.log_likelihood[b], total - 100.0L * b, 4));
    CHECK(log_close<T>(draws_e.log_likelihood[b], total - 100.0L * b, 4));
    CHECK(draws_e.first[b] == draws.first[b]);
    CHECK(draws_e.second[b] == draws.second[b]);
    for (int j = 0; j < m; ++j) {
      const real got = post.first.log_prob(b, x.lowers()[b] + j);
      const real want = wx[j] == ninf ? ninf : wx[j] - total;
      if (!log_close<T>(got, want, 8) && bad++ < 5) {
        CAPTURE(j, want, got);
        CHECK(false);
      }
    }
  }
  CHECK(bad == 0);
  CAPTURE(worst);
  CHECK(worst <= 1);
}

namespace {

// first_j = sum_i g_i q_{i-j} and the sum of its terms' magnitudes, long double,
// from log q
void ref_grad(const rvec& g, const rvec& lq, std::size_t m, rvec& value, rvec& size) {
  value.assign(m, 0);
  size.assign(m, 0);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t k = 0; k < lq.size(); ++k) {
      const real t = g[j + k] * std::exp(lq[k]);
      value[j] += t;
      size[j] += std::fabs(t);
    }
}

// the error of every element relative to the sum of its terms' magnitudes, as
// a multiple of tol (plus T's smallest normal, for results below its range)
template <class T>
real grad_error(const std::vector<T>& got, const rvec& value, const rvec& size, real tol) {
  real worst = 0;
  for (std::size_t j = 0; j < got.size(); ++j) {
    if (size[j] == 0) {
      worst = std::max<real>(worst, got[j] == 0 ? 0 : INFINITY);
      continue;
    }
    // results beyond T's range: +-inf is the answer T holds
    if (std::fabs(value[j]) > std::numeric_limits<T>::max()) continue;
    // below T's normal range T holds the value to within its smallest normal
    const real e = std::fabs(got[j] - value[j]) / (tol * size[j] + std::numeric_limits<T>::min());
    worst = std::max(worst, std::isfinite(e) ? e : INFINITY);
  }
  return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("log space batch: sum_grad with large gradients over far-tail sums",
                   "[distributions][log][batch]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  MARG_SEEDED_RNG(rng);
  const int B = 8;
  const std::int64_t big = sizeof(T) == 4 ? 400 : 2000;
  const rows<T> xr = make_rows<T>(B, big, rng, 0.1, 0.9), yr = make_rows<T>(B, big, rng, 0.1, 0.9);
  const marg::pmf_batch<T> x(xr.pmfs), y(yr.pmfs);
  const int m = x.length(), n = y.length(), len = m + n - 1;
  // g = d f / d r of a log-likelihood observed at two far-tail sums: about
  // 1 / r there, as large as T holds, opposite signs, 0 elsewhere; the terms
  // g_i q_{i-j} then matter where q_{i-j} is below T's range
  const real cap = std::log(static_cast<real>(std::numeric_limits<T>::max())) - 2;
  std::uniform_real_distribution<double> u(0, 5);
  std::vector<T> gv(static_cast<std::size_t>(B) * len, T(0));
  for (int b = 0; b < B; ++b) {
    gv[std::int64_t{b} * len + 7] = static_cast<T>(std::exp(cap - u(rng)));
    gv[std::int64_t{b} * len + len - 8] = static_cast<T>(-std::exp(cap - u(rng)));
  }
  const auto grad = marg::sum_grad(x, y, gv);
  // relative to the sum of the terms' magnitudes: the linear product's bound
  // (len T roundings) plus the scaling of log_convolve's runs
  const real tol = 4 * (len + 64) * std::numeric_limits<T>::epsilon();
  real worst = 0;
  std::int64_t lost = 0;
  rvec value, size;
  for (int b = 0; b < B; ++b) {
    const rvec g(gv.begin() + std::int64_t{b} * len, gv.begin() + std::int64_t{b + 1} * len);
    const rvec lx = stored_logs(x, b), ly = stored_logs(y, b);
    ref_grad(g, ly, static_cast<std::size_t>(m), value, size);
    const std::vector<T> gp(grad.first.begin() + std::int64_t{b} * m,
                            grad.first.begin() + std::int64_t{b + 1} * m);
    worst = std::max(worst, grad_error(gp, value, size, tol));
    // the same through the pmf form
    if (x.row_has_log_probs(b) || y.row_has_log_probs(b)) {
      const auto single = marg::sum_grad(x.row(b), y.row(b), std::vector<T>(g.begin(), g.end()));
      CHECK(single.first == gp);
    }
    // the linear product with T's probabilities (below T's range: 0) loses terms
    for (int j = 0; j < m; ++j) {
      real linear = 0;
      for (int k = 0; k < n; ++k)
        linear += g[j + k] * static_cast<real>(y.data()[std::int64_t{b} * n + k]);
      lost += size[j] > 0 && std::fabs(value[j]) <= std::numeric_limits<T>::max() &&
              std::fabs(linear - value[j]) > 0.01L * size[j];
    }
    // gradient with respect to y: reverse roles (gb_k = sum_i g_i p_{i-k})
    ref_grad(g, lx, static_cast<std::size_t>(n), value, size);
    const std::vector<T> gq(grad.second.begin() + std::int64_t{b} * n,
                            grad.second.begin() + std::int64_t{b + 1} * n);
    worst = std::max(worst, grad_error(gq, value, size, tol));
  }
  CAPTURE(worst, lost);
  CHECK(worst <= 1);
  // the test reaches terms the linear path cannot hold
  CHECK(lost > 0);
}
