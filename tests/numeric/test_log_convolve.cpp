// Log-space convolution and its vector-Jacobian products against a plain
// long double log-sum-exp loop and against closed forms (lgamma): inputs
// spanning 1 to exp(-11500), -inf entries, strides, batches with broadcast
// operands, NaN propagation and argument errors.
#include <catch2/catch.hpp>

#include <marg/numeric/log_convolve.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

constexpr real ninf = -std::numeric_limits<real>::infinity();

// r_i = log sum_j exp(a_j + b_{i-j}) in long double, largest term factored out
rvec ref_log_convolve(const rvec& a, const rvec& b) {
  const std::size_t m = a.size(), n = b.size();
  rvec r(m + n - 1, ninf);
  for (std::size_t i = 0; i < r.size(); ++i) {
    real top = ninf;
    for (std::size_t j = 0; j < m; ++j)
      if (i >= j && i - j < n) top = std::max(top, a[j] + b[i - j]);
    if (top == ninf) continue;
    real s = 0;
    for (std::size_t j = 0; j < m; ++j)
      if (i >= j && i - j < n && a[j] + b[i - j] != ninf) s += std::exp(a[j] + b[i - j] - top);
    r[i] = top + std::log(s);
  }
  return r;
}

// ga_j = sum_i g_i exp(a_j + b_{i-j} - r_i), and its scale sum_i |g_i| exp(...)
void ref_grad_a(const rvec& g, const rvec& a, const rvec& b, const rvec& r, rvec& ga, rvec& scale) {
  const std::size_t m = a.size(), n = b.size();
  ga.assign(m, 0);
  scale.assign(m, 0);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t k = 0; k < n; ++k) {
      if (a[j] == ninf || b[k] == ninf) continue;
      const real t = std::exp(a[j] + b[k] - r[j + k]);
      ga[j] += g[j + k] * t;
      scale[j] += std::fabs(g[j + k]) * t;
    }
}

// uniform on [lo, hi)
real uniform_real(rng& g, real lo, real hi) {
  return lo + (hi - lo) * std::uniform_real_distribution<double>(0.0, 1.0)(g);
}

// log-weights uniform in [-span, 0], about one in `holes` of them -inf
rvec random_logs(rng& g, std::int64_t len, real span, int holes) {
  rvec x(static_cast<std::size_t>(len));
  for (real& v : x)
    v = holes > 0 && uniform_int(g, 0, holes - 1) == 0 ? ninf : -uniform_real(g, 0, 1) * span;
  return x;
}

template <class T>
std::vector<T> host_strided(const rvec& x, int inc, T fill) {
  std::vector<T> v(x.empty() ? 0 : (x.size() - 1) * inc + 1, fill);
  for (std::size_t i = 0; i < x.size(); ++i) v[i * inc] = static_cast<T>(x[i]);
  return v;
}

// the values as T holds them: the reference must see the same inputs
template <class T>
rvec rounded(const rvec& x) {
  rvec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = static_cast<T>(x[i]);
  return y;
}

template <class T>
void expect_log_close(const std::vector<T>& got, int inc, const rvec& want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    const real v = got[i * inc];
    CAPTURE(i, want[i], v);
    CHECK(log_close<T>(v, want[i]));
  }
}

template <class T>
void check_forward(rng& g, std::int64_t m, std::int64_t n, real span, int holes) {
  const int inca = static_cast<int>(uniform_int(g, 1, 3)),
            incb = static_cast<int>(uniform_int(g, 1, 3));
  const int incr = static_cast<int>(uniform_int(g, 1, 3));
  const rvec a = rounded<T>(random_logs(g, m, span, holes));
  const rvec b = rounded<T>(random_logs(g, n, span, holes));
  const auto pa = host_strided<T>(a, inca, T(7)), pb = host_strided<T>(b, incb, T(7));
  std::vector<T> pr((m + n - 2) * incr + 1, T(9));
  CAPTURE(m, n, span, holes, inca, incb, incr);
  marg::log_convolve<T>(static_cast<int>(m), static_cast<int>(n), pa.data(), inca, pb.data(), incb,
                        pr.data(), incr);
  expect_log_close(pr, incr, ref_log_convolve(a, b));
  for (std::size_t i = 0; i < pr.size(); ++i)
    if (i % incr != 0) CHECK(pr[i] == T(9));  // gaps untouched
}

// log C(N, k) + N log(1/2): Binomial(N, 1/2) in closed form
rvec binomial_half_logs(std::int64_t N) {
  rvec x(static_cast<std::size_t>(N + 1));
  for (std::int64_t k = 0; k <= N; ++k)
    x[k] = std::lgamma(real(N + 1)) - std::lgamma(real(k + 1)) - std::lgamma(real(N - k + 1)) -
           N * std::log(real(2));
  return x;
}

}  // namespace

TEMPLATE_TEST_CASE("log_convolve: random log-weights from 1 down to exp(-11500)", "[numeric][log]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const real span : {real(3), real(60), real(900), real(11500)}) {
    for (int k = 0; k < 6; ++k) {
      const std::int64_t m = k == 0 ? 1 : uniform_int(g, 1, 150);
      const std::int64_t n = k == 1 ? 1 : uniform_int(g, 1, 150);
      check_forward<T>(g, m, n, span, k % 3 == 2 ? 4 : 0);
    }
  }
}

TEMPLATE_TEST_CASE("log_convolve: Binomial(N, 1/2) + itself is Binomial(2N, 1/2) at every k",
                   "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // N = 3000: probabilities from 2^-3000 (below double's range) to 0.015
  for (const std::int64_t N : {std::int64_t{1}, std::int64_t{40}, std::int64_t{3000}}) {
    const rvec x = binomial_half_logs(N), want = binomial_half_logs(2 * N);
    const std::vector<T> px = host_strided<T>(x, 1, T(0));
    std::vector<T> r(want.size());
    marg::log_convolve<T>(static_cast<int>(N + 1), static_cast<int>(N + 1), px.data(), 1, px.data(),
                          1, r.data(), 1);
    // the inputs are rounded to T: allow for that rounding (2 ulp of log x)
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(N, i, want[i], r[i]);
      CHECK(log_close<T>(r[i], want[i], 2));
    }
  }
}

TEMPLATE_TEST_CASE("log_convolve: batches with broadcast operands and mixed ranges",
                   "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int m = static_cast<int>(uniform_int(g, 1, 60)),
            n = static_cast<int>(uniform_int(g, 1, 60));
  const int batch = 7, lr = m + n - 1;
  // host vectors, and pool memory (on the CUDA backend: the device path,
  // with the many-window problems redone on the host)
  for (const memory mem : {memory::host, memory::pool})
    for (const bool share_a : {false, true}) {
      std::vector<rvec> as, bs;
      // problems alternate between one window (a single linear product) and many
      for (int i = 0; i < batch; ++i) {
        as.push_back(rounded<T>(random_logs(g, m, i % 2 ? 5 : 4000, i == 3 ? 3 : 0)));
        bs.push_back(rounded<T>(random_logs(g, n, i % 3 ? 8 : 2000, 0)));
      }
      if (share_a)
        for (rvec& a : as) a = as[0];
      const std::int64_t sa = share_a ? 0 : m + 2, sb = n + 1, sr = lr + 3;
      std::vector<T> pa((share_a ? 1 : batch) * (m + 2)), pb(batch * sb), pr(batch * sr, T(5));
      for (int i = 0; i < batch; ++i) {
        for (int j = 0; j < m; ++j) pa[i * sa + j] = static_cast<T>(as[i][j]);
        for (int j = 0; j < n; ++j) pb[i * sb + j] = static_cast<T>(bs[i][j]);
      }
      CAPTURE(m, n, share_a, name_of(mem));
      if (mem == memory::host) {
        marg::log_convolve_batched<T>(m, n, pa.data(), 1, sa, pb.data(), 1, sb, pr.data(), 1, sr,
                                      batch);
      } else {
        marg::array<T> xa(pa), xb(pb), xr(pr);
        marg::log_convolve_batched<T>(m, n, xa.data(), 1, sa, xb.data(), 1, sb, xr.data(), 1, sr,
                                      batch, xa.stream());
        pr = xr.to_vector();
      }
      for (int i = 0; i < batch; ++i) {
        CAPTURE(i);
        const std::vector<T> ri(pr.begin() + i * sr, pr.begin() + i * sr + lr);
        expect_log_close(ri, 1, ref_log_convolve(as[i], bs[i]));
        CHECK(pr[i * sr + lr] == T(5));
      }
    }
}

TEMPLATE_TEST_CASE("log_convolve: pool memory operands", "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const rvec a = rounded<T>(random_logs(g, 97, 700, 5)), b = rounded<T>(random_logs(g, 31, 10, 0));
  marg::array<T> pa(a.size()), pb(b.size()), pr(a.size() + b.size() - 1);
  for (std::size_t i = 0; i < a.size(); ++i) pa[i] = static_cast<T>(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) pb[i] = static_cast<T>(b[i]);
  marg::log_convolve<T>(97, 31, pa.data(), 1, pb.data(), 1, pr.data(), 1, pa.stream());
  expect_log_close(pr.to_vector(), 1, ref_log_convolve(a, b));
}

// On the CUDA backend small problems (m n up to 65536) are one kernel (a
// warp per problem up to 320 outputs, its products in fragments of equal
// length where their tables fit, else a run of outputs per lane; a block per
// problem beyond) and larger ones the scaled linear product with a direct
// pass for wide spans: all of them, with every kind of problem in one batch,
// in pool memory, a read with a stride of 2
TEMPLATE_TEST_CASE("log_convolve: pool memory batches of small and large problems",
                   "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const T inf = std::numeric_limits<T>::infinity();
  for (const auto& [m, n] :
       {std::pair{40, 57}, std::pair{1, 200}, std::pair{7, 3}, std::pair{64, 64},
        std::pair{160, 161}, std::pair{100, 400}, std::pair{1500, 2}, std::pair{300, 310}}) {
    // problems: one window, a wide span with holes, a NaN in a, a's all -inf,
    // +inf in b, a narrow span of float-sized width 25
    constexpr int batch = 6;
    const int lr = m + n - 1;
    std::vector<rvec> as, bs;
    for (int i = 0; i < batch; ++i) {
      as.push_back(rounded<T>(random_logs(g, m, i == 1 ? 5000 : i == 5 ? 25 : 6, i == 1 ? 4 : 0)));
      bs.push_back(rounded<T>(random_logs(g, n, i == 1 ? 3000 : 9, 0)));
    }
    as[2][static_cast<std::size_t>(m / 2)] = std::numeric_limits<real>::quiet_NaN();
    for (real& v : as[3]) v = ninf;
    bs[4][static_cast<std::size_t>(n - 1)] = std::numeric_limits<real>::infinity();
    marg::array<T> xa(static_cast<std::size_t>(batch * 2 * m)),
        xb(static_cast<std::size_t>(batch * n)), xr(static_cast<std::size_t>(batch * (lr + 1)));
    for (int i = 0; i < batch; ++i) {
      for (int j = 0; j < m; ++j) {
        xa[2 * (i * m + j)] = static_cast<T>(as[i][j]);
        xa[2 * (i * m + j) + 1] = std::numeric_limits<T>::quiet_NaN();  // never read
      }
      for (int j = 0; j < n; ++j) xb[i * n + j] = static_cast<T>(bs[i][j]);
      xr[i * (lr + 1) + lr] = T(5);
    }
    CAPTURE(m, n);
    marg::log_convolve_batched<T>(m, n, xa.data(), 2, 2 * m, xb.data(), 1, n, xr.data(), 1, lr + 1,
                                  batch, xa.stream());
    const std::vector<T> r = xr.to_vector();
    for (int i = 0; i < batch; ++i) {
      CAPTURE(i);
      const std::vector<T> ri(r.begin() + i * (lr + 1), r.begin() + i * (lr + 1) + lr);
      if (i == 2 || i == 4)
        for (const T v : ri) CHECK(std::isnan(v));
      else if (i == 3)
        for (const T v : ri) CHECK(v == -inf);
      else
        expect_log_close(ri, 1, ref_log_convolve(as[i], bs[i]));
      CHECK(r[i * (lr + 1) + lr] == T(5));  // the gap between problems untouched
    }
  }
}

TEMPLATE_TEST_CASE("log_convolve: -inf, NaN and +inf inputs", "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> none = {-inf, -inf, -inf}, some = {T(-1), -inf, T(-2)};
  std::vector<T> r(5, T(1));
  marg::log_convolve<T>(3, 3, none.data(), 1, some.data(), 1, r.data(), 1);
  for (const T v : r) CHECK(v == -inf);
  for (const T bad : {std::numeric_limits<T>::quiet_NaN(), inf}) {
    const std::vector<T> x = {T(-1), bad, T(-3)};
    marg::log_convolve<T>(3, 3, x.data(), 1, some.data(), 1, r.data(), 1);
    for (const T v : r) CHECK(std::isnan(v));
  }
  // a gap in the middle of the sum's support: -inf exactly there
  const std::vector<T> ends = {T(0), -inf, -inf, -inf, T(-4000)};
  std::vector<T> r2(9);
  marg::log_convolve<T>(5, 5, ends.data(), 1, ends.data(), 1, r2.data(), 1);
  const rvec want = ref_log_convolve(rounded<T>({0, ninf, ninf, ninf, -4000}),
                                     rounded<T>({0, ninf, ninf, ninf, -4000}));
  expect_log_close(r2, 1, want);
}

TEMPLATE_TEST_CASE("log_convolve: bad arguments throw invalid_argument naming them",
                   "[numeric][log]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  std::vector<T> a(4, T(-1)), r(8, T(0));
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(marg::log_convolve<T>(0, 4, a.data(), 1, a.data(), 1, r.data(), 1),
                    Contains("m = 0"));
  CHECK_THROWS_WITH(marg::log_convolve<T>(4, 4, a.data(), 0, a.data(), 1, r.data(), 1),
                    Contains("inca = 0"));
  CHECK_THROWS_WITH(marg::log_convolve<T>(4, 4, a.data(), 1, nullptr, 1, r.data(), 1),
                    Contains("b is null"));
  CHECK_THROWS_WITH(marg::log_convolve<T>(4, 4, r.data(), 1, a.data(), 1, r.data() + 1, 1),
                    Contains("overlaps input a"));
  CHECK_THROWS_AS(
      marg::log_convolve_batched<T>(4, 4, a.data(), 1, 0, a.data(), 1, 0, r.data(), 1, 3, 2),
      marg::invalid_argument);
  CHECK_THROWS_WITH(marg::log_convolve_grad_b<T>(4, 4, r.data(), 1, a.data(), 1, a.data(), 2,
                                                 r.data(), 1, a.data(), 1),
                    Contains("gb overlaps input"));
}

TEMPLATE_TEST_CASE("log_convolve: gradients where every output is -inf are 0", "[numeric][log]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  const T ninf_t = -std::numeric_limits<T>::infinity();
  const std::vector<T> a = {ninf_t}, b = {T(-1), T(-2), T(-3)}, r(3, ninf_t),
                       g = {T(1), T(-2), T(3)};
  std::vector<T> ga(1, T(7)), gb(3, T(7));
  marg::log_convolve_grad_a<T>(1, 3, g.data(), 1, a.data(), 1, b.data(), 1, r.data(), 1, ga.data(),
                               1);
  marg::log_convolve_grad_b<T>(1, 3, g.data(), 1, a.data(), 1, b.data(), 1, r.data(), 1, gb.data(),
                               1);
  CHECK(ga[0] == T(0));
  for (const T v : gb) CHECK(v == T(0));
}

TEMPLATE_TEST_CASE("log_convolve: gradients against the long double loop", "[numeric][log]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const real tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  // below T's normal range a result can only be rounded towards 0
  const real floor = std::numeric_limits<T>::min();
  for (const real span : {real(4), real(2500)}) {
    for (int k = 0; k < 5; ++k) {
      const std::int64_t m = uniform_int(g, 1, 90), n = uniform_int(g, 1, 90), lr = m + n - 1;
      const rvec a = rounded<T>(random_logs(g, m, span, k == 2 ? 4 : 0));
      const rvec b = rounded<T>(random_logs(g, n, span, 0));
      // r as T holds it: the gradient is a function of the r it is given
      const rvec r = rounded<T>(ref_log_convolve(a, b));
      rvec gr(static_cast<std::size_t>(lr));
      for (real& v : gr) v = static_cast<T>(uniform_real(g, -1, 1));
      const auto pa = host_strided<T>(a, 1, T(0)), pb = host_strided<T>(b, 2, T(0));
      const auto pg = host_strided<T>(gr, 1, T(0)), pr = host_strided<T>(r, 1, T(0));
      std::vector<T> ga(m), gb(n);
      marg::log_convolve_grad_a<T>(static_cast<int>(m), static_cast<int>(n), pg.data(), 1,
                                   pa.data(), 1, pb.data(), 2, pr.data(), 1, ga.data(), 1);
      marg::log_convolve_grad_b<T>(static_cast<int>(m), static_cast<int>(n), pg.data(), 1,
                                   pa.data(), 1, pb.data(), 2, pr.data(), 1, gb.data(), 1);
      rvec want_a, scale_a, want_b, scale_b;
      ref_grad_a(gr, a, b, r, want_a, scale_a);
      ref_grad_a(gr, b, a, r, want_b, scale_b);
      CAPTURE(span, m, n);
      for (std::int64_t j = 0; j < m; ++j) {
        CAPTURE(j, want_a[j], ga[j]);
        CHECK(std::fabs(ga[j] - want_a[j]) <= tol * scale_a[j] + floor);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        CAPTURE(j, want_b[j], gb[j]);
        CHECK(std::fabs(gb[j] - want_b[j]) <= tol * scale_b[j] + floor);
      }
    }
  }
}
