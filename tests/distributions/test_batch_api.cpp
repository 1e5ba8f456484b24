// The batched API beyond the algebra: flat-buffer construction, binomial_batch,
// hard evidence, sum_grad, joint sampling given a sum or soft evidence, and
// per-row sampling. Each against the scalar operations row by row (themselves
// checked against long double loops in the other files) or against a long
// double reference here; float and double on both backends; bad inputs; the
// same results for any thread count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test::dist;
using marg::test::uniform_int;

namespace {

template <class T>
real tol() {
  return std::is_same_v<T, double> ? 1e-12L : 2e-5L;
}

// log-likelihoods: a relative error e in P is an absolute error e in log P,
// so compare logs absolutely (a relative test fails where log P is near 0)
template <class T>
bool close_log(real got, real want) {
  return std::fabs(got - want) <= tol<T>();
}

// |got - want| <= tol * want (+ the smallest normal T, for values below T's range)
template <class T>
bool close(real got, real want) {
  return std::fabs(got - want) <= tol<T>() * std::fabs(want) + std::numeric_limits<T>::min();
}

// every value of row b's padded support and one past each end
template <class T>
void check_row(const marg::pmf_batch<T>& got, int b, const marg::pmf<T>& want) {
  CAPTURE(b);
  const std::int64_t lo = got.lowers()[b], hi = lo + got.length() - 1;
  for (std::int64_t k = lo - 1; k <= hi + 1; ++k) {
    CAPTURE(k);
    const real w = want.empty() ? 0 : static_cast<real>(want.prob(k));
    CHECK(close<T>(got.prob(b, k), w));
  }
}

// a random batch: rows of random lengths (zeros inside, padded), random lowers,
// built by the flat constructor with normalization; the same rows as pmfs
template <class T>
std::pair<marg::pmf_batch<T>, std::vector<marg::pmf<T>>> random_batch(marg::test::rng& g, int B,
                                                                      int max_len) {
  const int L = static_cast<int>(uniform_int(g, 1, max_len));
  std::vector<T> values(static_cast<std::size_t>(B) * L, T(0));
  std::vector<std::int64_t> lowers(B);
  std::vector<marg::pmf<T>> rows;
  for (int b = 0; b < B; ++b) {
    const int n = static_cast<int>(uniform_int(g, 1, L));
    auto w = marg::test::random_positive<T>(g, n, marg::test::all_shapes[b % 4]);
    if (n > 2 && b % 3 == 0) w[n / 2] = T(0);  // a zero inside the support
    std::copy(w.begin(), w.end(), values.begin() + static_cast<std::ptrdiff_t>(b) * L);
    lowers[b] = uniform_int(g, -50, 50);
    rows.push_back(marg::categorical<T>(w, lowers[b]));
  }
  return {marg::pmf_batch<T>(B, L, lowers, values, true), std::move(rows)};
}

// the same batch padded to its length again through the vector-of-pmf constructor
template <class T>
std::vector<marg::pmf<T>> rows_of(const marg::pmf_batch<T>& x) {
  std::vector<marg::pmf<T>> r;
  for (int b = 0; b < x.batch(); ++b) r.push_back(x.row(b));
  return r;
}

// a likelihood over the padded sums of x + y: zero for some rows and entries
template <class T>
std::vector<T> random_likelihood(marg::test::rng& g, const marg::pmf_batch<T>& x,
                                 const marg::pmf_batch<T>& y) {
  const int len = x.length() + y.length() - 1;
  std::vector<T> L(static_cast<std::size_t>(x.batch()) * len);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : L) v = u(g) < 0.2 ? T(0) : static_cast<T>(std::pow(10.0, -6 * u(g)));
  std::fill(L.begin(), L.begin() + len, T(0));  // row 0: impossible evidence
  return L;
}

// chi-square of draws against long double probabilities, at a fixed acceptance bound
void check_chi_square(const std::map<std::int64_t, std::int64_t>& counts,
                      const std::map<std::int64_t, real>& probs, std::int64_t n) {
  std::vector<std::int64_t> c;
  rvec p;
  for (const auto& [k, pk] : probs) {
    p.push_back(pk);
    const auto it = counts.find(k);
    c.push_back(it == counts.end() ? 0 : it->second);
  }
  for (const auto& [k, ck] : counts) {
    CAPTURE(k);
    CHECK(probs.count(k) == 1);  // never a value of zero probability
  }
  int dof = 0;
  const real stat = chi_square(c, p, n, dof);
  CAPTURE(stat, dof);
  CHECK(stat <= chi_square_bound(dof));
}

}  // namespace

TEMPLATE_TEST_CASE("batch api: flat buffer constructor against categorical rows", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (int B : {1, 7, 130}) {
    CAPTURE(B);
    auto [x, rows] = random_batch<T>(g, B, 23);
    REQUIRE(x.batch() == B);
    CHECK(x.truncated_masses().empty());
    for (int b = 0; b < B; ++b) check_row(x, b, rows[b]);
    // unnormalized rows are kept as they are
    std::vector<T> raw(static_cast<std::size_t>(B) * x.length());
    std::copy(x.data(), x.data() + raw.size(), raw.begin());
    const marg::pmf_batch<T> same(B, x.length(), x.lowers(), raw);
    for (std::size_t i = 0; i < raw.size(); ++i) CHECK(same.data()[i] == raw[i]);
    // from pool memory, no copy
    marg::array<T> a(raw);
    const T* where = a.data();
    const marg::pmf_batch<T> pooled(B, x.length(), x.lowers(), std::move(a));
    CHECK(pooled.data() == where);
  }
}

TEMPLATE_TEST_CASE("batch api: binomial_batch against a long double recurrence", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  std::vector<std::int64_t> ns{0, 1, 2, 3, 7, 13, 31, 100, 763, 997, 3001, 5, 40, 1, 640};
  std::vector<double> ps{0.3,  0.5,  0,   1,    0.999, 1e-9, 0.25, 0.5,
                         0.07, 0.93, 0.5, 1e-3, 0.4,   1,    0.2};
  for (int extra = 0; extra < 20; ++extra) {
    ns.push_back(uniform_int(g, 0, 2000));
    ps.push_back(std::uniform_real_distribution<double>(0, 1)(g));
  }
  for (const double tail : {1e-17, 1e-6, 0.01}) {
    CAPTURE(tail);
    const auto x = marg::binomial_batch<T>(ns, ps, tail);
    REQUIRE(x.batch() == static_cast<int>(ns.size()));
    for (int b = 0; b < x.batch(); ++b) {
      CAPTURE(b, ns[b], ps[b]);
      const std::int64_t n = ns[b], lo = x.lowers()[b];
      const real p = ps[b];
      rvec ref(n + 1, 0);
      if (n == 0 || p == 0 || p == 1) {
        ref[p == 1 ? n : 0] = 1;
      } else {
        ref = ref_binomial(n, p);
      }
      std::int64_t hi = lo;
      while (hi + 1 <= lo + x.length() - 1 && x.prob(b, hi + 1) > 0) ++hi;
      REQUIRE(lo >= 0);
      REQUIRE(hi <= n);
      real below = 0, above = 0, kept = 0;
      for (std::int64_t k = 0; k < lo; ++k) below += ref[k];
      for (std::int64_t k = hi + 1; k <= n; ++k) above += ref[k];
      for (std::int64_t k = lo; k <= hi; ++k) kept += ref[k];
      CHECK(below < tail);
      CHECK(above < tail);
      // not much wider than needed: the value at each end carries at least tail/100 beyond it
      CHECK((lo == 0 || below + ref[lo] >= tail / 100));
      CHECK((hi == n || above + ref[hi] >= tail / 100));
      // the law conditioned on the window
      for (std::int64_t k = lo; k <= hi; ++k) {
        CAPTURE(k);
        CHECK(close<T>(x.prob(b, k), ref[k] / kept));
      }
      const real dropped = below + above;
      CHECK(std::fabs(x.truncated_mass(b) - dropped) <= 1e-2L * dropped + 1e-300L);
      // the row as a pmf carries the truncated mass
      CHECK(x.row(b).truncated_mass() == x.truncated_mass(b));
    }
  }
  // a sum keeps the combined truncated mass
  const auto s = marg::binomial_batch<T>({30, 40}, {0.5, 0.5}, 1e-6);
  const auto two = s + s;
  for (int b = 0; b < 2; ++b) {
    const real t = s.truncated_mass(b);
    CHECK(two.truncated_mass(b) == Approx(static_cast<double>(2 * t - t * t)).epsilon(1e-5));
  }
}

TEMPLATE_TEST_CASE("batch api: hard evidence against the scalar condition_on_sum",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (int B : {1, 5, 61}) {
    CAPTURE(B);
    const auto [x, xr] = random_batch<T>(g, B, 17);
    const auto [y, yr] = random_batch<T>(g, B, 11);
    const auto y1 = marg::pmf_batch<T>(std::vector<marg::pmf<T>>{yr[0]});  // shared row
    for (const auto* yy : {&y, &y1}) {
      std::vector<std::int64_t> k(B);
      for (int b = 0; b < B; ++b)
        k[b] = x.lowers()[b] + yy->lowers()[yy->batch() == 1 ? 0 : b] +
               uniform_int(g, -1, x.length() + yy->length() - 1);
      const auto post = marg::condition_on_sum(x, *yy, k);
      const auto ll = marg::log_prob_sum(x, *yy, k);
      const auto xs = rows_of(x), ys = rows_of(*yy);
      for (int b = 0; b < B; ++b) {
        const auto& yb = ys[yy->batch() == 1 ? 0 : b];
        const auto want = marg::condition_on_sum(xs[b], yb, k[b]);
        CAPTURE(b, k[b]);
        if (want.first.empty()) {
          CHECK(post.log_likelihood[b] == -std::numeric_limits<T>::infinity());
          CHECK(ll[b] == -std::numeric_limits<T>::infinity());
          CHECK(post.first.row(b).empty());
          CHECK(post.second.row(b).empty());
          continue;
        }
        CAPTURE(post.log_likelihood[b], ll[b], want.log_likelihood);
        CHECK(close_log<T>(post.log_likelihood[b], want.log_likelihood));
        CHECK(close_log<T>(ll[b], want.log_likelihood));
        check_row(post.first, b, want.first);
        check_row(post.second, b, want.second);
      }
    }
  }
}

// products of the diagonal far below the range of T: the posterior must survive
TEMPLATE_TEST_CASE("batch api: hard evidence and sampling with products below the range",
                   "[distributions]", float, double) {
  using T = TestType;
  const T t = std::is_same_v<T, float> ? T(1e-30) : T(1e-200);
  const auto x = marg::categorical<T>({t, t, T(1)});
  const marg::pmf_batch<T> bx(std::vector<marg::pmf<T>>{x, x});
  // row 0: k = 1, two products of about t^2 each; row 1: k = 0, one product
  const std::vector<std::int64_t> k{1, 0};
  const auto post = marg::condition_on_sum(bx, bx, k);
  for (int b = 0; b < 2; ++b) {
    CAPTURE(b);
    const auto want = marg::condition_on_sum(x, x, k[b]);
    REQUIRE(std::isfinite(post.log_likelihood[b]));
    CHECK(close_log<T>(post.log_likelihood[b], want.log_likelihood));
    check_row(post.first, b, want.first);
    check_row(post.second, b, want.second);
  }
  CHECK(post.first.prob(0, 0) == Approx(0.5).epsilon(1e-6));
  const auto d = marg::detail::sample_given_sum_with(bx, bx, k, {0.75, 0.5, 0.2, 0.5});
  CHECK(d.first == std::vector<std::int64_t>{1, 0});
  CHECK(d.second == std::vector<std::int64_t>{0, 0});
}

TEMPLATE_TEST_CASE("batch api: soft evidence with a shared second row", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 19;
  const auto [x, xr] = random_batch<T>(g, B, 13);
  const auto [y, yr] = random_batch<T>(g, 1, 9);
  const auto L = random_likelihood(g, x, y);
  const int len = x.length() + y.length() - 1;
  const auto post = marg::condition_on_sum(x, y, L);
  const auto xs = rows_of(x);
  const auto y0 = y.row(0);
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    const std::vector<T> Lb(L.begin() + b * len, L.begin() + (b + 1) * len);
    const auto want = marg::condition_on_sum(xs[b], y0, Lb);
    if (want.first.empty()) {
      CHECK(post.log_likelihood[b] == -std::numeric_limits<T>::infinity());
      continue;
    }
    CHECK(std::fabs(post.log_likelihood[b] - want.log_likelihood) <=
          tol<T>() * (1 + std::fabs(want.log_likelihood)) * 10);
    check_row(post.first, b, want.first);
    check_row(post.second, b, want.second);
  }
}

TEMPLATE_TEST_CASE("batch api: sum_grad against the scalar sum_grad", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (int B : {1, 3, 29}) {
    CAPTURE(B);
    const auto [x, xr] = random_batch<T>(g, B, 15);
    const auto [y, yr] = random_batch<T>(g, B, 8);
    const auto y1 = marg::pmf_batch<T>(std::vector<marg::pmf<T>>{y.row(0)});
    for (const auto* yy : {&y, &y1}) {
      const int m = x.length(), n = yy->length(), len = m + n - 1;
      const auto gr = marg::test::random_signed<T>(g, std::int64_t{B} * len);
      const auto got = marg::sum_grad(x, *yy, gr);
      REQUIRE(got.first.size() == static_cast<std::size_t>(B) * m);
      REQUIRE(got.second.size() == static_cast<std::size_t>(B) * n);
      for (int b = 0; b < B; ++b) {
        CAPTURE(b);
        const std::vector<T> gb(gr.begin() + b * len, gr.begin() + (b + 1) * len);
        const auto want = marg::sum_grad(x.row(b), yy->row(yy->batch() == 1 ? 0 : b), gb);
        // mixed signs: errors relative to the sum of |terms|, bounded by max |g|
        for (int j = 0; j < m; ++j)
          CHECK(std::fabs(got.first[b * m + j] - want.first[j]) <= 4 * tol<T>());
        for (int j = 0; j < n; ++j)
          CHECK(std::fabs(got.second[b * n + j] - want.second[j]) <= 4 * tol<T>());
      }
    }
  }
}

TEMPLATE_TEST_CASE("batch api: joint draws given the sum invert the scalar posterior",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 41;
  const auto [x, xr] = random_batch<T>(g, B, 12);
  const auto [y, yr] = random_batch<T>(g, B, 12);
  std::vector<std::int64_t> k(B);
  for (int b = 0; b < B; ++b)
    k[b] = x.lowers()[b] + y.lowers()[b] + uniform_int(g, -1, x.length() + y.length() - 1);
  const auto u = uniforms(g, 2 * B);
  const auto d = marg::detail::sample_given_sum_with(x, y, k, u);
  const auto xs = rows_of(x), ys = rows_of(y);
  for (int b = 0; b < B; ++b) {
    CAPTURE(b, k[b], u[2 * b]);
    const auto want = marg::condition_on_sum(xs[b], ys[b], k[b]);
    if (want.first.empty()) {
      CHECK(d.log_likelihood[b] == -std::numeric_limits<T>::infinity());
      CHECK(d.first[b] == 0);
      continue;
    }
    CHECK(close_log<T>(d.log_likelihood[b], want.log_likelihood));
    CHECK(d.first[b] == want.first.lower() + want.first.sample_index(u[2 * b]));
    CHECK(d.first[b] + d.second[b] == k[b]);
  }
}

TEMPLATE_TEST_CASE("batch api: joint draws given soft evidence invert the scalar laws",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 37;
  const auto [x, xr] = random_batch<T>(g, B, 10);
  const auto [y, yr] = random_batch<T>(g, B, 14);
  const auto L = random_likelihood(g, x, y);
  const int len = x.length() + y.length() - 1;
  const auto u = uniforms(g, 2 * B);
  const auto d = marg::detail::sample_given_evidence_with(x, y, L, u);
  const auto soft = marg::condition_on_sum(x, y, L);
  const auto xs = rows_of(x), ys = rows_of(y);
  for (int b = 0; b < B; ++b) {
    CAPTURE(b, u[2 * b], u[2 * b + 1]);
    const std::vector<T> Lb(L.begin() + b * len, L.begin() + (b + 1) * len);
    const auto z = marg::sum_given_evidence(xs[b], ys[b], Lb);
    if (z.empty()) {
      CHECK(d.log_likelihood[b] == -std::numeric_limits<T>::infinity());
      continue;
    }
    CHECK(std::fabs(d.log_likelihood[b] - soft.log_likelihood[b]) <=
          10 * tol<T>() * (1 + std::fabs(soft.log_likelihood[b])));
    const std::int64_t sum = z.lower() + z.sample_index(u[2 * b]);
    CHECK(d.first[b] + d.second[b] == sum);
    const auto given = marg::condition_on_sum(xs[b], ys[b], sum);
    CHECK(d.first[b] == given.first.lower() + given.first.sample_index(u[2 * b + 1]));
  }
}

TEMPLATE_TEST_CASE("batch api: joint draws follow the joint posterior (chi-square)",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // one pair of rows repeated: every row's draw comes from the same law
  const auto p = marg::categorical<T>({1, 3, 0, 2, 5}, -2);
  const auto q = marg::categorical<T>({4, 1, 2}, 3);
  const int B = 20000;
  const marg::pmf_batch<T> x(std::vector<marg::pmf<T>>(B, p));
  const marg::pmf_batch<T> y(std::vector<marg::pmf<T>>{q});
  const int len = x.length() + y.length() - 1;
  const std::vector<T> l0{T(0.1), T(1), T(0.5), T(0), T(2), T(0.3), T(1)};
  std::vector<T> L;
  for (int b = 0; b < B; ++b) L.insert(L.end(), l0.begin(), l0.end());
  REQUIRE(static_cast<int>(l0.size()) == len);
  // exact joint posterior in long double: p_i q_j L(i + j)
  std::map<std::int64_t, real> joint;
  real z = 0;
  for (std::int64_t i = p.lower(); i <= p.upper(); ++i)
    for (std::int64_t j = q.lower(); j <= q.upper(); ++j) {
      const real w = static_cast<real>(p.prob(i)) * q.prob(j) * l0[i + j - p.lower() - q.lower()];
      if (w > 0) joint[i * 100 + j] = w, z += w;
    }
  for (auto& [key, w] : joint) w /= z;
  const auto d = marg::sample_given_evidence(x, y, L, g);
  std::map<std::int64_t, std::int64_t> counts;
  for (int b = 0; b < B; ++b) ++counts[d.first[b] * 100 + d.second[b]];
  CHECK(d.log_likelihood[0] == Approx(static_cast<double>(std::log(z))).epsilon(1e-5));
  check_chi_square(counts, joint, B);
  // given a hard sum of 4
  std::map<std::int64_t, real> given;
  real zs = 0;
  for (std::int64_t i = p.lower(); i <= p.upper(); ++i) {
    const real w = static_cast<real>(p.prob(i)) * q.prob(4 - i);
    if (w > 0) given[i] = w, zs += w;
  }
  for (auto& [key, w] : given) w /= zs;
  const auto h = marg::sample_given_sum(x, y, std::vector<std::int64_t>(B, 4), g);
  std::map<std::int64_t, std::int64_t> hc;
  for (int b = 0; b < B; ++b) ++hc[h.first[b]];
  check_chi_square(hc, given, B);
}

TEMPLATE_TEST_CASE("batch api: per-row sampling", "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 53, per_row = 7;
  const auto [x, rows] = random_batch<T>(g, B, 19);
  const auto u = uniforms(g, static_cast<std::size_t>(B) * per_row);
  // one pass over sorted uniforms gives the draws of separate inversions
  const auto many = x.sample_with(u, per_row);
  const auto xs = rows_of(x);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < per_row; ++j) {
      const double ub = u[b * per_row + j];
      CAPTURE(b, j, ub);
      const std::int64_t want = xs[b].lower() + xs[b].sample_index(ub);
      CHECK(many[b * per_row + j] == want);
      CHECK(x.lowers()[b] + x.sample_index(b, ub) == want);
      CHECK(x.sample_with(std::vector<double>(B, ub))[b] == want);
    }
  // the draws of one row follow its law
  const auto p = marg::categorical<T>({2, 0, 1, 7, 3}, 10);
  const marg::pmf_batch<T> one(std::vector<marg::pmf<T>>{p});
  const int N = 20000;
  const auto v = one.sample(g, N);
  std::map<std::int64_t, std::int64_t> counts;
  for (auto k : v) ++counts[k];
  std::map<std::int64_t, real> probs;
  for (std::int64_t k = p.lower(); k <= p.upper(); ++k)
    if (p.prob(k) > 0) probs[k] = p.prob(k);
  check_chi_square(counts, probs, N);
}

TEMPLATE_TEST_CASE("batch api: results do not depend on the thread count", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 3001;  // several chunks of rows
  std::vector<std::int64_t> ns(B);
  std::vector<double> ps(B);
  for (int b = 0; b < B; ++b)
    ns[b] = uniform_int(g, 0, 300), ps[b] = std::uniform_real_distribution<double>(0, 1)(g);
  const auto u = uniforms(g, 2 * B);
  const auto seed = g();
  struct outputs {
    std::vector<T> bin, post_x, post_y, soft_x, ll, soft_ll, grad;
    std::vector<std::int64_t> draws, draws_soft, samples;
  };
  auto run = [&](int threads) {
    marg::test::threads_guard guard(threads);
    outputs o;
    const auto x = marg::binomial_batch<T>(ns, ps, 1e-12);
    const auto y = -marg::binomial_batch<T>(ns, std::vector<double>(B, 0.3), 1e-12);
    o.bin.assign(x.data(), x.data() + std::size_t{1} * B * x.length());
    std::vector<std::int64_t> k(B);
    for (int b = 0; b < B; ++b) k[b] = x.lowers()[b] + y.lowers()[b] + b % 7;
    const auto post = marg::condition_on_sum(x, y, k);
    o.post_x.assign(post.first.data(), post.first.data() + std::size_t{1} * B * x.length());
    o.post_y.assign(post.second.data(), post.second.data() + std::size_t{1} * B * y.length());
    o.ll = marg::log_prob_sum(x, y, k);
    const int len = x.length() + y.length() - 1;
    std::vector<T> L(static_cast<std::size_t>(B) * len);
    for (std::size_t i = 0; i < L.size(); ++i) L[i] = static_cast<T>(1.0 / (1 + i % 13));
    const auto soft = marg::condition_on_sum(x, y, L);
    o.soft_x.assign(soft.first.data(), soft.first.data() + std::size_t{1} * B * x.length());
    o.soft_ll = soft.log_likelihood;
    o.grad = marg::sum_grad(x, y, L).first;
    o.draws = marg::detail::sample_given_sum_with(x, y, k, u).first;
    o.draws_soft = marg::detail::sample_given_evidence_with(x, y, L, u).second;
    marg::test::rng g2(seed);
    o.samples = x.sample(g2, 3);
    return o;
  };
  const outputs a = run(1), b = run(3);
  CHECK(a.bin == b.bin);
  CHECK(a.post_x == b.post_x);
  CHECK(a.post_y == b.post_y);
  CHECK(a.ll == b.ll);
  CHECK(a.soft_x == b.soft_x);
  CHECK(a.soft_ll == b.soft_ll);
  CHECK(a.grad == b.grad);
  CHECK(a.draws == b.draws);
  CHECK(a.draws_soft == b.draws_soft);
  CHECK(a.samples == b.samples);
}

TEMPLATE_TEST_CASE("batch api: bad input", "[distributions]", float, double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const std::vector<std::int64_t> lo2{0, 0};
  // flat constructor
  CHECK_THROWS_WITH(marg::pmf_batch<T>(0, 1, {}, std::vector<T>{}), Catch::Contains("batch = 0"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(1, 0, {0}, std::vector<T>{}), Catch::Contains("length = 0"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, lo2, std::vector<T>{1, 1, 1}),
                    Catch::Contains("values.size() = 3"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, {0}, std::vector<T>{1, 1, 1, 1}),
                    Catch::Contains("lowers.size() = 1"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, lo2, std::vector<T>{1, 1, -1, 1}),
                    Catch::Contains("values[2] = -1"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, lo2, std::vector<T>{1, nan, 1, 1}),
                    Catch::Contains("values[1] = nan"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, lo2, std::vector<T>{1, 1, 1, inf}),
                    Catch::Contains("values[3] = inf"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(2, 2, lo2, std::vector<T>{1, 1, 0, 0}, true),
                    Catch::Contains("row 1 of values is all zero"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(1, 3, {std::numeric_limits<std::int64_t>::max() - 1},
                                       std::vector<T>{1, 1, 1}),
                    Catch::Contains("overflows int64"));
  // binomial_batch
  CHECK_THROWS_WITH(marg::binomial_batch<T>({}, {}), Catch::Contains("ns is empty"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3, 4}, {0.5}), Catch::Contains("ps.size() = 1"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3, -4}, {0.5, 0.5}), Catch::Contains("ns[1] = -4"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3, 4}, {0.5, 1.5}), Catch::Contains("ps[1] = 1.5"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3}, {nan}), Catch::Contains("ps[0] = nan"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3}, {0.5}, 0), Catch::Contains("tail = 0"));
  CHECK_THROWS_WITH(marg::binomial_batch<T>({3}, {0.5}, 1), Catch::Contains("tail = 1"));
  // conditioning, gradients, sampling
  const marg::pmf_batch<T> a(std::vector<marg::pmf<T>>(2, marg::bernoulli<T>(T(0.5))));
  const marg::pmf_batch<T> c(std::vector<marg::pmf<T>>(3, marg::bernoulli<T>(T(0.5))));
  CHECK_THROWS_WITH(marg::condition_on_sum(a, c, std::vector<std::int64_t>{1, 1}),
                    Catch::Contains("y.batch() = 3"));
  CHECK_THROWS_WITH(marg::condition_on_sum(a, a, std::vector<std::int64_t>{1}),
                    Catch::Contains("k.size() = 1"));
  CHECK_THROWS_WITH(marg::sum_grad(a, a, std::vector<T>(5, 0)), Catch::Contains("g.size() = 5"));
  CHECK_THROWS_WITH(marg::sum_grad(a, a, std::vector<T>{0, 0, 0, 0, nan, 0}),
                    Catch::Contains("g[4] = nan"));
  CHECK_THROWS_WITH(marg::condition_on_sum(a, a, std::vector<T>{1, 1, 1, 1, -2, 1}),
                    Catch::Contains("likelihood[4] = -2"));
  marg::test::rng g(1);
  CHECK_THROWS_WITH(marg::sample_given_evidence(a, a, std::vector<T>{1, 1, inf, 1, 1, 1}, g),
                    Catch::Contains("likelihood[2] = inf"));
  CHECK_THROWS_WITH(marg::sample_given_evidence(a, a, std::vector<T>(3, 1), g),
                    Catch::Contains("likelihood.size() = 3"));
  CHECK_THROWS_WITH(marg::sample_given_sum(a, c, std::vector<std::int64_t>{1, 1}, g),
                    Catch::Contains("y.batch() = 3"));
  CHECK_THROWS_WITH(a.sample_with({0.5, 1.0}), Catch::Contains("u[1] = 1"));
  CHECK_THROWS_WITH(a.sample_with({0.5}), Catch::Contains("u.size() = 1"));
  CHECK_THROWS_WITH(a.sample(g, 0), Catch::Contains("per_row = 0"));
  CHECK_THROWS_WITH(a.sample_index(0, -0.5), Catch::Contains("u[0] = -0.5"));
  CHECK_THROWS_WITH(a.truncated_mass(2), Catch::Contains("b = 2"));
  // an impossible row cannot be sampled; the joint samplers report it instead
  const auto post = marg::condition_on_sum(a, a, std::vector<std::int64_t>{1, 5});
  CHECK(post.log_likelihood[1] == -std::numeric_limits<T>::infinity());
  CHECK_THROWS_WITH(post.first.sample(g), Catch::Contains("row 1 has no mass"));
  const auto d = marg::sample_given_sum(a, a, std::vector<std::int64_t>{1, 5}, g);
  CHECK(d.log_likelihood[1] == -std::numeric_limits<T>::infinity());
  CHECK(std::isfinite(d.log_likelihood[0]));
}

// The row checks run inside the parallel row loops: the error must still name
// the first bad entry, whichever chunk finishes first and for any thread count.
TEMPLATE_TEST_CASE("batch api: the first bad entry is named for any thread count",
                   "[distributions]", float, double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    marg::test::threads_guard guard(threads);
    // binomial_batch: rows 300 (p) and 2900 (n) bad, in different chunks of 256 rows
    const int B = 3001;
    std::vector<std::int64_t> ns(B, 20);
    std::vector<double> ps(B, 0.4);
    ps[300] = 1.5;
    ns[2900] = -1;
    CHECK_THROWS_WITH(marg::binomial_batch<T>(ns, ps), Catch::Contains("ps[300] = 1.5"));
    ps[300] = 0.4;
    CHECK_THROWS_WITH(marg::binomial_batch<T>(ns, ps), Catch::Contains("ns[2900] = -1"));
    // sample_given_evidence: the likelihood bad in rows 7 and 2500 (distinct chunks)
    ns[2900] = 20;
    const auto x = marg::binomial_batch<T>(ns, ps, 1e-9);
    const int len = 2 * x.length() - 1;
    std::vector<T> L(static_cast<std::size_t>(B) * len, T(1));
    const std::size_t first = std::size_t{7} * len + 2, second = std::size_t{2500} * len + 1;
    L[second] = nan;
    L[first] = -inf;
    marg::test::rng g(1);
    CHECK_THROWS_WITH(marg::sample_given_evidence(x, x, L, g),
                      Catch::Contains("likelihood[" + std::to_string(first) + "] = -inf"));
    L[first] = 1;
    CHECK_THROWS_WITH(marg::sample_given_evidence(x, x, L, g),
                      Catch::Contains("likelihood[" + std::to_string(second) + "] = nan"));
    L[second] = 1;
    CHECK_NOTHROW(marg::sample_given_evidence(x, x, L, g));
  }
}
