// Gradients of the convolution, checked against an explicitly materialized
// band matrix (long double) and against central finite differences of
// f(p, q) = sum_i w_i r_i(p, q).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

// sizes small enough for dense (m + n - 1) x max(m, n) matrices
std::vector<std::pair<int, int>> band_sizes(rng& g) {
  std::vector<std::pair<int, int>> s = {{1, 1}, {1, 5}, {5, 1}, {2, 3}, {3, 7}, {7, 3}, {40, 33}};
  for (int k = 0; k < 16; ++k) s.emplace_back(random_size(g, 40), random_size(g, 40));
  return s;
}

// |x| elementwise
rvec abs_of(rvec v) {
  for (auto& x : v) x = std::fabs(x);
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("gradients: against a materialized band matrix", "[numeric]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  for (const auto& [m, n] : band_sizes(g)) {
    for (const bool signed_g : {false, true}) {
      CAPTURE(m, n, signed_g);
      const int incp = random_size(g, 3);
      const int incq = random_size(g, 3);
      const int incg = random_size(g, 3);
      const int incout = random_size(g, 3);
      CAPTURE(incp, incq, incg, incout);
      const std::vector<T> vp = random_positive<T>(g, m, shape::scattered);
      const std::vector<T> vq = random_positive<T>(g, n, shape::bell);
      const std::vector<T> vg = signed_g ? random_signed<T>(g, m + n - 1)
                                         : random_positive<T>(g, m + n - 1, shape::uniform);
      strided<T> p(memory::host, m, incp, 0, 1), q(memory::pool, n, incq, 0, 1);
      strided<T> gr(memory::host, m + n - 1, incg, 0, 1);
      strided<T> gp(memory::pool, m, incout, 0, 1), gq(memory::host, n, incout, 0, 1);
      strided<T> r(memory::host, m + n - 1, incout, 0, 1);
      p.set(0, vp);
      q.set(0, vq);
      gr.set(0, vg);
      marg::convolve_grad_p<T>(m, n, gr.data(), incg, q.data(), incq, gp.data(), incout);
      marg::convolve_grad_q<T>(m, n, gr.data(), incg, p.data(), incp, gq.data(), incout);
      marg::convolve<T>(m, n, p.data(), incp, q.data(), incq, r.data(), incout);

      const dense_matrix bq = band_matrix(widen(vq), m);  // (m + n - 1) x m
      const dense_matrix bp = band_matrix(widen(vp), n);  // (m + n - 1) x n
      REQUIRE(bq.rows == static_cast<std::size_t>(m + n - 1));
      REQUIRE(bp.rows == static_cast<std::size_t>(m + n - 1));
      const rvec want_gp = multiply_transposed(bq, widen(vg));
      const rvec want_gq = multiply_transposed(bp, widen(vg));
      // with mixed signs the error scale is the sum of |terms|: |B|^T |g|
      const rvec scale_gp = multiply_transposed(bq, abs_of(widen(vg)));
      const rvec scale_gq = multiply_transposed(bp, abs_of(widen(vg)));
      const error_report rep_gp = compare_scaled(gp.get(0), want_gp, scale_gp, tolerance<T>());
      const error_report rep_gq = compare_scaled(gq.get(0), want_gq, scale_gq, tolerance<T>());
      const error_report rep_r =
          compare(r.get(0), multiply(bp, widen(vq)), tolerance<T>());  // r = band(p, n) q
      INFO("grad_p: " << rep_gp.describe());
      INFO("grad_q: " << rep_gq.describe());
      INFO("convolve: " << rep_r.describe());
      CHECK(rep_gp.failures == 0);
      CHECK(rep_gq.failures == 0);
      CHECK(rep_r.failures == 0);
      if (!signed_g) {  // positive inputs: the plain relative bound holds too
        CHECK(compare(gp.get(0), want_gp, tolerance<T>()).failures == 0);
        CHECK(compare(gq.get(0), want_gq, tolerance<T>()).failures == 0);
      }
      CHECK(gp.stray_writes() == 0);
      CHECK(gq.stray_writes() == 0);
      CHECK(r.stray_writes() == 0);
    }
  }
}

TEMPLATE_TEST_CASE("gradients: central finite differences of sum_i w_i r_i", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  std::vector<std::pair<int, int>> sizes = {{1, 1}, {1, 6}, {6, 1}, {17, 23}, {40, 9}};
  for (int k = 0; k < 3; ++k) sizes.emplace_back(random_size(g, 70), random_size(g, 70));
  // f is linear in each argument: the central difference has no truncation
  // error, only the rounding of f in double (about eps * f / h)
  const double h = 1e-3;
  const double tol = sizeof(T) == sizeof(float) ? 2e-5 : 1e-8;
  for (const auto& [m, n] : sizes) {
    CAPTURE(m, n);
    const std::vector<T> vp = random_positive<T>(g, m, shape::uniform);
    const std::vector<T> vq = random_positive<T>(g, n, shape::uniform);
    const std::vector<T> w = random_positive<T>(g, m + n - 1, shape::uniform);
    std::vector<double> p(vp.begin(), vp.end()), q(vq.begin(), vq.end());
    auto f = [&](const std::vector<double>& x, const std::vector<double>& y) {
      std::vector<double> r(static_cast<std::size_t>(m + n - 1));
      marg::convolve<double>(m, n, x.data(), 1, y.data(), 1, r.data(), 1);
      double s = 0;
      for (std::size_t i = 0; i < r.size(); ++i) s += static_cast<double>(w[i]) * r[i];
      return s;
    };
    std::vector<T> gp(static_cast<std::size_t>(m)), gq(static_cast<std::size_t>(n));
    marg::convolve_grad_p<T>(m, n, w.data(), 1, vq.data(), 1, gp.data(), 1);
    marg::convolve_grad_q<T>(m, n, w.data(), 1, vp.data(), 1, gq.data(), 1);
    error_report rep_p, rep_q;
    for (int j = 0; j < m; ++j) {
      auto up = p, down = p;
      up[j] += h;
      down[j] -= h;
      const double fd = (f(up, q) - f(down, q)) / (2 * h);
      rep_p.add(j, gp[j], fd, relative_error(gp[j], fd), tol);
    }
    for (int j = 0; j < n; ++j) {
      auto up = q, down = q;
      up[j] += h;
      down[j] -= h;
      const double fd = (f(p, up) - f(p, down)) / (2 * h);
      rep_q.add(j, gq[j], fd, relative_error(gq[j], fd), tol);
    }
    INFO("grad_p: " << rep_p.describe());
    INFO("grad_q: " << rep_q.describe());
    CHECK(rep_p.failures == 0);
    CHECK(rep_q.failures == 0);
  }
}

TEMPLATE_TEST_CASE("gradients: long reductions (long operand and short output)", "[numeric]",
                   MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_USE_BACKEND_OR_SKIP(TestType);
  // each output element sums up to 65536 products of a decaying series: the
  // case where a running sum in T drops the tail (all outputs short, so a
  // backend may choose a direct loop over the long operand)
  const std::pair<int, int> sizes[] = {{65536, 1}, {65536, 17}, {65536, 63}, {4096, 17},
                                       {1, 65536}, {17, 65536}, {63, 65536}, {17, 4096}};
  for (const auto& [m, n] : sizes) {
    const std::int64_t lg = std::int64_t{m} + n - 1;
    std::vector<T> w(static_cast<std::size_t>(lg));
    for (std::int64_t i = 0; i < lg; ++i)
      w[i] = static_cast<T>(std::exp(-23.0 * static_cast<double>(i) / std::max<double>(1, lg - 1)));
    const std::vector<T> p(static_cast<std::size_t>(m), T(0.5)),
        q(static_cast<std::size_t>(n), T(0.25));
    std::vector<T> gp(static_cast<std::size_t>(m)), gq(static_cast<std::size_t>(n));
    marg::convolve_grad_p<T>(m, n, w.data(), 1, q.data(), 1, gp.data(), 1);
    marg::convolve_grad_q<T>(m, n, w.data(), 1, p.data(), 1, gq.data(), 1);
    const error_report rep_p = compare(gp, ref_correlate(widen(w), widen(q), m), tolerance<T>());
    const error_report rep_q = compare(gq, ref_correlate(widen(w), widen(p), n), tolerance<T>());
    CAPTURE(m, n);
    INFO("g_i = exp(-23 i / (m + n - 2)), p = 0.5, q = 0.25");
    INFO("grad_p: " << rep_p.describe());
    INFO("grad_q: " << rep_q.describe());
    CHECK(rep_p.failures == 0);
    CHECK(rep_q.failures == 0);
  }
}
