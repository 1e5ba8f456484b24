/// @file dist_fixture.hpp
/// @brief Shared pieces of the distributions suite (the backend configurations
/// and guard come from the numeric suite's fixture): long double references of
/// the closed-form families (recurrences, not the library's formulas), error
/// measures.
#pragma once

#include <catch2/catch.hpp>

#include <marg/marg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../common/reference.hpp"
#include "../numeric/numeric_fixture.hpp"

namespace marg::test::dist {

using marg::test::real;
using marg::test::rvec;

/// Binomial(n, p) by the ratio recurrence from the mode, in long double logs.
inline rvec ref_binomial(std::int64_t n, real p) {
  rvec lp(n + 1);
  const std::int64_t mode = static_cast<std::int64_t>(std::floor((n + 1) * p));
  const std::int64_t m0 = std::min(mode, n);
  lp[m0] = 0;
  const real odds = std::log(p) - std::log1p(-p);
  for (std::int64_t k = m0; k < n; ++k)
    lp[k + 1] = lp[k] + std::log(static_cast<real>(n - k) / (k + 1)) + odds;
  for (std::int64_t k = m0; k > 0; --k)
    lp[k - 1] = lp[k] - std::log(static_cast<real>(n - k + 1) / k) - odds;
  real s = 0;
  for (real v : lp) s += std::exp(v);
  rvec r(n + 1);
  for (std::int64_t k = 0; k <= n; ++k) r[k] = std::exp(lp[k]) / s;
  return r;
}

/// Poisson(lambda) on 0..K by the recurrence p_k = p_{k-1} lambda / k, in logs.
inline rvec ref_poisson(real lambda, std::int64_t K) {
  rvec r(K + 1);
  real lp = -lambda;
  for (std::int64_t k = 0; k <= K; ++k) {
    if (k > 0) lp += std::log(lambda / k);
    r[k] = std::exp(lp);
  }
  return r;
}

/// Relative error of got against ref over entries with |ref| >= floor.
struct rel_report {
  real worst = 0;
  std::int64_t at = -1, compared = 0;
  std::string describe() const {
    return "worst relative error " + std::to_string(static_cast<double>(worst)) + " at " +
           std::to_string(at) + " over " + std::to_string(compared) + " entries";
  }
};

/// @param got computed values
/// @param ref reference values (same length)
/// @param floor smallest reference magnitude compared
template <class V>
rel_report rel_error(const std::vector<V>& got, const rvec& ref, real floor) {
  rel_report r;
  for (std::size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    if (std::fabs(ref[i]) < floor) continue;
    ++r.compared;
    const real e = std::fabs((static_cast<real>(got[i]) - ref[i]) / ref[i]);
    if (e > r.worst || std::isnan(e)) r.worst = e, r.at = static_cast<std::int64_t>(i);
  }
  return r;
}

/// @return the smallest probability compared with relative error for T
template <class T>
real tail_floor() {
  return std::is_same_v<T, double> ? 1e-300L : 1e-30L;
}

/// Chi-square statistic of counts against expected probabilities, pooling
/// cells whose expected count is below 5 into one.
inline real chi_square(const std::vector<std::int64_t>& counts, const rvec& probs, std::int64_t n,
                       int& dof) {
  real stat = 0, pooled_e = 0, pooled_o = 0;
  dof = -1;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    const real e = probs[i] * n;
    if (e < 5) {
      pooled_e += e;
      pooled_o += counts[i];
      continue;
    }
    stat += (counts[i] - e) * (counts[i] - e) / e;
    ++dof;
  }
  if (pooled_e > 0) {
    stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
    ++dof;
  }
  return stat;
}

/// Upper 1e-6 quantile of chi-square with dof degrees of freedom
/// (Wilson-Hilferty), a loose but fixed acceptance bound.
inline real chi_square_bound(int dof) {
  const real z = 4.753;  // standard normal upper 1e-6 quantile
  const real k = std::max(dof, 1);
  const real c = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
  return k * c * c * c;
}

/// n uniforms in [0, 1) from g, as the samplers draw them (53 bits each).
inline std::vector<double> uniforms(marg::test::rng& g, std::size_t n) {
  std::vector<double> u(n);
  for (auto& v : u) v = std::generate_canonical<double, 53>(g);
  return u;
}

}  // namespace marg::test::dist

/// The four configurations {float, double} x {cpu, cuda}, for TEMPLATE_TEST_CASE;
/// start each case with MARG_USE_BACKEND_OR_SKIP(TestType) (numeric_fixture.hpp).
#define MARG_DIST_CONFIGS MARG_ALL_CONFIGS
