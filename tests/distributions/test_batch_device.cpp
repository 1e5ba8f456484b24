// The batched distributions' device paths (binomial_batch, negation,
// binomial_count_evidence, sample_given_evidence on the CUDA backend) against
// the host path with the same inputs and uniforms, and binomial_count_evidence
// against a long double reference on every backend; condition_on_sum on a
// batch_evidence against a long double reference on every backend.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dist_fixture.hpp"

namespace {

using marg::test::real;
using marg::test::rng;

template <class T>
std::vector<T> values_of(const marg::pmf_batch<T>& x) {
  return std::vector<T>(x.data(), x.data() + std::int64_t{x.batch()} * x.length());
}

template <class T>
std::vector<T> host_values(const marg::array<T>& a) {
  return a.to_vector();
}

// B rows of binomials with n in 0..nmax and p drawn to include 0, 1 and extremes
std::pair<std::vector<std::int64_t>, std::vector<double>> binomial_params(rng& g, int B, int nmax) {
  std::vector<std::int64_t> ns(B);
  std::vector<double> ps(B);
  std::uniform_int_distribution<int> n(0, nmax), kind(0, 9);
  std::uniform_real_distribution<double> u(0, 1);
  for (int b = 0; b < B; ++b) {
    ns[b] = n(g);
    const int k = kind(g);
    ps[b] = k == 0 ? 0.0 : k == 1 ? 1.0 : k == 2 ? 1e-6 * u(g) : k == 3 ? 1 - 1e-9 * u(g) : u(g);
  }
  return {ns, ps};
}

// the reference: P(Y = y | N), Y ~ Binomial(N, rho), in long double
real ref_count_likelihood(std::int64_t N, std::int64_t y, real rho) {
  if (N < y || N < 0) return 0;
  if (rho == 0) return y == 0 ? 1 : 0;
  if (rho == 1) return N == y ? 1 : 0;
  const real lc = std::lgamma(static_cast<real>(N) + 1) - std::lgamma(static_cast<real>(y) + 1) -
                  std::lgamma(static_cast<real>(N - y) + 1);
  return std::exp(lc + y * std::log(rho) + (N - y) * std::log1p(-rho));
}

template <class T>
marg::pmf_batch<T> small_binomials(rng& g, int B, int nmax) {
  const auto [ns, ps] = binomial_params(g, B, nmax);
  return marg::binomial_batch<T>(ns, ps, 1e-17);
}

// per-row parameters of binomial_count_evidence: offsets 40..100, counts
// 0..80, rho 0, 1 or in (0.01, 0.99)
struct count_rows {
  std::vector<std::int64_t> offsets, observed;
  std::vector<double> rhos;
};

count_rows count_params(rng& g, int B) {
  count_rows r{std::vector<std::int64_t>(B), std::vector<std::int64_t>(B), std::vector<double>(B)};
  std::uniform_int_distribution<int> off(0, 60), obs(0, 80), kind(0, 7);
  std::uniform_real_distribution<double> u(0.01, 0.99);
  for (int b = 0; b < B; ++b) {
    r.offsets[b] = off(g) + 40, r.observed[b] = obs(g);
    const int k = kind(g);
    r.rhos[b] = k == 0 ? 0.0 : k == 1 ? 1.0 : u(g);
  }
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("batch device: binomial_count_evidence against long double", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const int B : {1, 7, 61}) {
    CAPTURE(B);
    const auto x = small_binomials<T>(g, B, 120);
    const auto y = -small_binomials<T>(g, B, 40);
    const auto [offsets, observed, rhos] = count_params(g, B);
    const std::int64_t n_max = 150;
    const auto e = marg::binomial_count_evidence(x, y, offsets, observed, rhos, n_max);
    REQUIRE(e.batch == B);
    REQUIRE(e.length == x.length() + y.length() - 1);
    const auto v = host_values(e.values);
    for (int b = 0; b < B; ++b) {
      CAPTURE(b, offsets[b], observed[b], rhos[b]);
      const std::int64_t base = offsets[b] + x.lowers()[b] + y.lowers()[b];
      for (int i = 0; i < e.length; ++i) {
        const std::int64_t N = base + i;
        const real ref = N > n_max ? 0 : ref_count_likelihood(N, observed[b], rhos[b]);
        const real got = v[std::int64_t{b} * e.length + i];
        CAPTURE(i, N, static_cast<double>(ref), static_cast<double>(got));
        if (std::isinf(e.log_scale[b])) {  // an impossible row: all zero
          CHECK(got == 0);
          CHECK(ref == 0);
          continue;
        }
        CHECK((ref != 0 || got == 0));
        // the scaled reference; below T's normal range the absolute error of a subnormal
        const real want = ref / std::exp(static_cast<real>(e.log_scale[b]));
        const real tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-10;
        CHECK(std::fabs(got - want) <= tolerance * want + 2 * std::numeric_limits<T>::min());
      }
    }
  }
}

TEMPLATE_TEST_CASE("batch device: sample_given_evidence on a batch_evidence equals the vector form",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 53;
  const auto x = small_binomials<T>(g, B, 90);
  const auto y = -small_binomials<T>(g, B, 30);
  std::vector<std::int64_t> offsets(B);
  std::vector<double> rhos(B);
  std::uniform_real_distribution<double> u01(0.05, 0.95);
  for (int b = 0; b < B; ++b) offsets[b] = 30 + b % 17, rhos[b] = u01(g);
  const auto e = marg::binomial_count_evidence(x, y, offsets, {25}, rhos, 200);
  const auto u = marg::test::dist::uniforms(g, 2 * B);
  const auto a = marg::detail::sample_given_evidence_with(x, y, e, u);
  const auto b = marg::detail::sample_given_evidence_with(x, y, host_values(e.values), u);
  for (int r = 0; r < B; ++r) {
    CAPTURE(r, u[2 * r], u[2 * r + 1]);
    CHECK(a.first[r] == b.first[r]);
    CHECK(a.second[r] == b.second[r]);
    if (std::isinf(b.log_likelihood[r])) {
      CHECK(std::isinf(a.log_likelihood[r]));
      continue;
    }
    const double want = static_cast<double>(b.log_likelihood[r]) + e.log_scale[r];
    CHECK(a.log_likelihood[r] == static_cast<T>(want));
  }
  // errors name the argument and its value
  marg::batch_evidence<T> bad;
  bad.batch = B + 1;
  CHECK_THROWS_WITH(marg::detail::sample_given_evidence_with(x, y, bad, u),
                    Catch::Contains("evidence.batch") && Catch::Contains(std::to_string(B + 1)));
  CHECK_THROWS_WITH(marg::binomial_count_evidence(x, y, offsets, {25}, {1.5}, 200),
                    Catch::Contains("rhos[0]") && Catch::Contains("1.5"));
  CHECK_THROWS_WITH(marg::binomial_count_evidence(x, y, offsets, {-3}, rhos, 200),
                    Catch::Contains("observed[0]") && Catch::Contains("-3"));
  CHECK_THROWS_WITH(marg::binomial_count_evidence(x, y, {1, 2}, {3}, rhos, 200),
                    Catch::Contains("offsets.size()") && Catch::Contains("2"));
}

// ---------------------------------------------------------------- condition_on_sum on a
// batch_evidence

namespace {

// the reference posterior of one row given evidence values L over the sums (in
// long double, the double loop over the joint): log sum_{i,j} p_i q_j L(i + j)
// and the normalized marginals
struct ref_posterior {
  real log_likelihood;
  std::vector<real> first, second;
};

template <class T, class Like>
ref_posterior reference_posterior(const T* p, int m, const T* q, int n, Like&& like) {
  ref_posterior r{0, std::vector<real>(m, 0), std::vector<real>(n, 0)};
  real total = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const real w = static_cast<real>(p[i]) * static_cast<real>(q[j]) * like(i + j);
      r.first[i] += w;
      r.second[j] += w;
      total += w;
    }
  r.log_likelihood = std::log(total);
  if (total > 0) {
    for (auto& v : r.first) v /= total;
    for (auto& v : r.second) v /= total;
  }
  return r;
}

// checks a batched posterior's row b against the reference: relative error
// tol, plus `floor` (absolute, on the posteriors and on the log likelihood)
template <class T>
void check_row(const marg::batch_sum_posterior<T>& post, const marg::pmf_batch<T>& x,
               const marg::pmf_batch<T>& y, int b, const ref_posterior& want, double tol,
               real floor = 0) {
  const int m = x.length(), n = y.length();  // posterior rows: B of each, y shared or not
  if (!(want.log_likelihood > -std::numeric_limits<real>::infinity())) {
    CHECK(std::isinf(post.log_likelihood[b]));
    CHECK(post.log_likelihood[b] < 0);
    for (int i = 0; i < m; ++i) CHECK(post.first.data()[std::int64_t{b} * m + i] == T(0));
    for (int j = 0; j < n; ++j) CHECK(post.second.data()[std::int64_t{b} * n + j] == T(0));
    return;
  }
  const real ll = post.log_likelihood[b];
  CAPTURE(static_cast<double>(ll), static_cast<double>(want.log_likelihood), floor);
  // the evidence rows cannot resolve this row's mass in T: zero is a right answer
  if (std::isinf(ll) && floor >= 1) return;
  CHECK(std::fabs(ll - want.log_likelihood) <= tol * (1 + std::fabs(want.log_likelihood)) + floor);
  const auto close = [&](real got, real ref) {
    return std::fabs(got - ref) <= tol * ref + 4 * std::numeric_limits<T>::min() + floor;
  };
  for (int i = 0; i < m; ++i) {
    const real got = post.first.data()[std::int64_t{b} * m + i];
    CAPTURE(i, static_cast<double>(got), static_cast<double>(want.first[i]));
    CHECK(close(got, want.first[i]));
  }
  for (int j = 0; j < n; ++j) {
    const real got = post.second.data()[std::int64_t{b} * n + j];
    CAPTURE(j, static_cast<double>(got), static_cast<double>(want.second[j]));
    CHECK(close(got, want.second[j]));
  }
  CHECK(post.first.lowers()[b] == x.lowers()[b]);
  CHECK(post.second.lowers()[b] == y.lowers()[y.batch() == 1 ? 0 : b]);
}

}  // namespace

TEMPLATE_TEST_CASE(
    "batch evidence: condition_on_sum on binomial_count_evidence against long double",
    "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // the posteriors' sums of products in T: a few units of T's epsilon per term
  const double tol = 20 * marg::test::tolerance<T>();
  for (const int B : {1, 2, 7, 61}) {
    for (const bool shared : {false, true}) {
      CAPTURE(B, shared);
      const auto x = small_binomials<T>(g, B, 120);
      const auto y = -small_binomials<T>(g, shared ? 1 : B, 40);
      // named references, not a structured binding: the reference's lambda
      // captures them, which clang before 16 rejects for bindings
      const auto params = count_params(g, B);
      const auto& offsets = params.offsets;
      const auto& observed = params.observed;
      const auto& rhos = params.rhos;
      const std::int64_t n_max = 150;
      const auto e = marg::binomial_count_evidence(x, y, offsets, observed, rhos, n_max);
      const auto post = marg::condition_on_sum(x, y, e);
      REQUIRE(post.first.batch() == B);
      REQUIRE(post.second.batch() == B);
      const int m = x.length(), n = y.length();
      const std::int64_t sq = shared ? 0 : n;
      for (int b = 0; b < B; ++b) {
        CAPTURE(b, offsets[b], observed[b], rhos[b]);
        const std::int64_t base = offsets[b] + x.lowers()[b] + y.lowers()[shared ? 0 : b];
        // the likelihood from its definition, not from the evidence rows
        const auto want = reference_posterior(
            x.data() + std::int64_t{b} * m, m, y.data() + b * sq, n, [&](int z) -> real {
              const std::int64_t N = base + z;
              return N > n_max ? 0 : ref_count_likelihood(N, observed[b], rhos[b]);
            });
        // the evidence rows hold L / exp(log_scale) in T: each value off by up to
        // half of T's smallest subnormal, which the posterior divides by the
        // row's scaled sum
        const real scaled_sum =
            std::isinf(e.log_scale[b]) ? 1 : std::exp(want.log_likelihood - e.log_scale[b]);
        check_row(post, x, y, b, want, tol,
                  e.length * std::numeric_limits<T>::denorm_min() / scaled_sum);
      }
    }
  }
}

TEMPLATE_TEST_CASE("batch evidence: condition_on_sum on given rows and scales against long double",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const double tol = 20 * marg::test::tolerance<T>();
  for (const int B : {1, 3, 13}) {
    for (const bool scaled : {true, false}) {
      CAPTURE(B, scaled);
      const auto x = small_binomials<T>(g, B, 50);
      const auto y = small_binomials<T>(g, B, 20);
      const int m = x.length(), n = y.length(), len = m + n - 1;
      marg::batch_evidence<T> e;
      e.batch = B;
      e.length = len;
      std::vector<T> v(static_cast<std::size_t>(B) * len);
      std::uniform_real_distribution<double> u(0, 1), s(-300, 300);
      for (auto& w : v) w = u(g) < 0.2 ? T(0) : static_cast<T>(u(g));
      if (B > 1)  // a row that is zero everywhere
        std::fill(v.begin() + len, v.begin() + 2 * len, T(0));
      if (scaled) {
        e.log_scale.resize(B);
        for (auto& l : e.log_scale) l = s(g);
        if (B > 2) e.log_scale[2] = -std::numeric_limits<double>::infinity();
      }
      e.values = marg::array<T>(v.size());
      std::copy(v.begin(), v.end(), e.values.data());
      const auto post = marg::condition_on_sum(x, y, e);
      for (int b = 0; b < B; ++b) {
        CAPTURE(b);
        const double scale = scaled ? e.log_scale[b] : 0;
        auto want =
            reference_posterior(x.data() + std::int64_t{b} * m, m, y.data() + std::int64_t{b} * n,
                                n, [&](int z) -> real { return v[std::int64_t{b} * len + z]; });
        if (std::isinf(scale)) want.log_likelihood = -std::numeric_limits<real>::infinity();
        want.log_likelihood += scale;
        check_row(post, x, y, b, want, tol);
      }
      // the std::vector overload on the same rows: the same posteriors, bit for
      // bit, and the log likelihoods without the scales
      const auto plain = marg::condition_on_sum(x, y, v);
      for (int b = 0; b < B; ++b) {
        CAPTURE(b);
        const double scale = scaled ? e.log_scale[b] : 0;
        if (std::isinf(plain.log_likelihood[b]) || std::isinf(scale)) continue;
        CHECK(post.log_likelihood[b] ==
              static_cast<T>(static_cast<double>(plain.log_likelihood[b]) + scale));
        for (int i = 0; i < m; ++i)
          CHECK(post.first.data()[std::int64_t{b} * m + i] ==
                plain.first.data()[std::int64_t{b} * m + i]);
        for (int j = 0; j < n; ++j)
          CHECK(post.second.data()[std::int64_t{b} * n + j] ==
                plain.second.data()[std::int64_t{b} * n + j]);
      }
    }
  }
}

TEMPLATE_TEST_CASE("batch evidence: condition_on_sum names bad evidence", "[distributions]",
                   MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 5;
  const auto x = small_binomials<T>(g, B, 30);
  const auto y = small_binomials<T>(g, B, 10);
  const int len = x.length() + y.length() - 1;
  const auto good = [&] {
    marg::batch_evidence<T> e;
    e.batch = B;
    e.length = len;
    e.values = marg::array<T>(static_cast<std::size_t>(B) * len);
    std::fill(e.values.data(), e.values.data() + e.values.size(), T(1));
    return e;
  };
  auto e = good();
  e.batch = B + 2;
  CHECK_THROWS_AS(marg::condition_on_sum(x, y, e), marg::invalid_argument);
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e),
                    Catch::Contains("evidence.batch") && Catch::Contains(std::to_string(B + 2)));
  e = good();
  e.length = len + 1;
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e),
                    Catch::Contains("evidence.length") && Catch::Contains(std::to_string(len + 1)));
  e = good();
  e.values.data()[len + 3] = T(-0.5);
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e),
                    Catch::Contains("evidence.values") && Catch::Contains("-0.5"));
  e = good();
  e.values.data()[2] = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e), Catch::Contains("evidence.values"));
  e = good();
  e.log_scale.assign(B, 0.0);
  e.log_scale[4] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e), Catch::Contains("evidence.log_scale[4]"));
  e = good();
  e.log_scale.assign(B - 1, 0.0);
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, e), Catch::Contains("evidence.log_scale.size()"));
}

// ---------------------------------------------------------------- device against host

namespace {

template <class T, class F>
auto on(marg::backend b, F&& f) {
  marg::test::backend_guard guard(b);
  return f();
}

}  // namespace

TEMPLATE_TEST_CASE("batch device: binomial_batch and negation bit for bit as on the host",
                   "[distributions][cuda]", float, double) {
  using T = TestType;
  MARG_SKIP_IF_NO_GPU(true);
  MARG_SEEDED_RNG(g);
  for (const int B : {1, 2, 31, 257, 5003}) {
    for (const int nmax : {0, 3, 700, 100000}) {
      CAPTURE(B, nmax);
      const auto [ns, ps] = binomial_params(g, B, nmax);
      const double tail = B % 2 ? 1e-17 : 1e-6;
      const auto h =
          on<T>(marg::backend::cpu, [&] { return marg::binomial_batch<T>(ns, ps, tail); });
      const auto d =
          on<T>(marg::backend::cuda, [&] { return marg::binomial_batch<T>(ns, ps, tail); });
      REQUIRE(d.length() == h.length());
      CHECK(d.lowers() == h.lowers());
      CHECK(d.truncated_masses() == h.truncated_masses());
      const auto hv = values_of(h), dv = values_of(d);
      std::int64_t mismatches = 0, first = -1;
      for (std::size_t i = 0; i < hv.size(); ++i)
        if (!(hv[i] == dv[i]) && mismatches++ == 0) first = static_cast<std::int64_t>(i);
      CAPTURE(first);
      CHECK(mismatches == 0);
      const auto hn = on<T>(marg::backend::cpu, [&] { return -h; });
      const auto dn = on<T>(marg::backend::cuda, [&] { return -d; });
      CHECK(dn.lowers() == hn.lowers());
      CHECK(values_of(dn) == values_of(hn));
    }
  }
}

TEMPLATE_TEST_CASE("batch device: evidence rows and draws as on the host with the same uniforms",
                   "[distributions][cuda]", float, double) {
  using T = TestType;
  MARG_SKIP_IF_NO_GPU(true);
  MARG_SEEDED_RNG(g);
  for (const int B : {1, 3, 97, 4099}) {
    CAPTURE(B);
    const auto [nx, px] = binomial_params(g, B, 700);
    const auto [ny, py] = binomial_params(g, B, 300);
    const auto x = marg::binomial_batch<T>(nx, px, 1e-17);
    const auto y = -marg::binomial_batch<T>(ny, py, 1e-17);
    std::vector<std::int64_t> offsets(B);
    std::vector<double> rhos(B);
    std::uniform_real_distribution<double> u01(0.02, 0.98);
    for (int b = 0; b < B; ++b) offsets[b] = ny[b], rhos[b] = u01(g);
    const std::int64_t observed = std::uniform_int_distribution<int>(0, 300)(g);
    const auto eh = on<T>(marg::backend::cpu, [&] {
      return marg::binomial_count_evidence(x, y, offsets, {observed}, rhos, 1000);
    });
    const auto ed = on<T>(marg::backend::cuda, [&] {
      return marg::binomial_count_evidence(x, y, offsets, {observed}, rhos, 1000);
    });
    CHECK(host_values(ed.values) == host_values(eh.values));
    for (int b = 0; b < B; ++b) {
      CAPTURE(b);
      if (std::isinf(eh.log_scale[b])) {
        CHECK(ed.log_scale[b] == eh.log_scale[b]);
      } else {
        // device lgamma (4 ulp) against the host's, three terms of up to lgamma(N + 1)
        CHECK(std::fabs(ed.log_scale[b] - eh.log_scale[b]) <=
              1e-9 * (1 + std::fabs(eh.log_scale[b])));
      }
    }
    const auto u = marg::test::dist::uniforms(g, 2 * B);
    const auto like = host_values(eh.values);
    const auto dh = on<T>(marg::backend::cpu,
                          [&] { return marg::detail::sample_given_evidence_with(x, y, like, u); });
    const auto dd = on<T>(marg::backend::cuda,
                          [&] { return marg::detail::sample_given_evidence_with(x, y, like, u); });
    std::int64_t differ = 0;
    for (int b = 0; b < B; ++b) {
      CAPTURE(b, u[2 * b], u[2 * b + 1]);
      differ += dd.first[b] != dh.first[b] || dd.second[b] != dh.second[b];
      if (std::isinf(dh.log_likelihood[b])) {
        CHECK(std::isinf(dd.log_likelihood[b]));
      } else {
        // the laws of the sums come from each backend's convolution kernels
        // (not bit for bit alike): T's rounding, a few units
        const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
        CHECK(std::fabs(dd.log_likelihood[b] - dh.log_likelihood[b]) <=
              tol * (1 + std::fabs(dh.log_likelihood[b])));
      }
    }
    // rows summed in double on the host are bit for bit the host's; only rows
    // the host sums in long double (products below DBL_MIN) may differ, and
    // rarely in the draw
    CAPTURE(differ);
    CHECK(differ <= B / 100);
  }
}

TEMPLATE_TEST_CASE("batch device: products below the double range and bad likelihoods",
                   "[distributions][cuda]", double) {
  using T = TestType;
  MARG_SKIP_IF_NO_GPU(true);
  // rows whose sums are near DBL_MIN (1e-300) and whose products with the
  // likelihood (1e-100) all fall below it: the host sums them in long double,
  // the device in scaled double; both against a long double reference
  const int B = 5, m = 4, n = 3, len = m + n - 1;
  std::vector<T> xv(B * m), yv(B * n), like(B * len);
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < m; ++i) xv[b * m + i] = T(1e-200) * (i + 1 + b);
    for (int i = 0; i < n; ++i) yv[b * n + i] = T(1e-100) * (n - i);
    for (int i = 0; i < len; ++i) like[b * len + i] = T(1e-100) * (1 + (i * 7 + b) % 5);
  }
  // unnormalized rows keep their tiny values
  const marg::pmf_batch<T> xs(B, m, std::vector<std::int64_t>(B, 0), xv);
  const marg::pmf_batch<T> ys(B, n, std::vector<std::int64_t>(B, 2), yv);
  std::vector<double> u(2 * B);
  for (int b = 0; b < B; ++b) u[2 * b] = (b + 0.5) / B, u[2 * b + 1] = 1 - (b + 0.5) / B;
  const auto dd = on<T>(marg::backend::cuda,
                        [&] { return marg::detail::sample_given_evidence_with(xs, ys, like, u); });
  const auto dh = on<T>(marg::backend::cpu,
                        [&] { return marg::detail::sample_given_evidence_with(xs, ys, like, u); });
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    real s = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        s += static_cast<real>(xv[b * m + i]) * yv[b * n + j] * like[b * len + i + j];
    const real ref = std::log(s);
    CHECK(std::fabs(dd.log_likelihood[b] - ref) <= 1e-13 * std::fabs(ref));
    CHECK(std::fabs(dh.log_likelihood[b] - ref) <= 1e-13 * std::fabs(ref));
    CHECK(dd.first[b] == dh.first[b]);
    CHECK(dd.second[b] == dh.second[b]);
  }
  // a NaN in the likelihood is named by its index, as on the host
  like[2 * len + 3] = std::numeric_limits<T>::quiet_NaN();
  marg::test::backend_guard guard(marg::backend::cuda);
  CHECK_THROWS_WITH(marg::detail::sample_given_evidence_with(xs, ys, like, u),
                    Catch::Contains("likelihood[" + std::to_string(2 * len + 3) + "]"));
}
