/// @file factories.hpp
/// @brief Factories of the common discrete families as marg::pmf<T>.
///
/// Probabilities are computed in long double log space (lgamma, log1p) and
/// normalized once by their log-sum-exp, which absorbs the rounding of the
/// log-gamma constants. Where some probability is below T's normal range
/// (binomial(100000, 0.5) in double, binomial(1000, 0.5) in float), the pmf
/// keeps the log-probabilities too (pmf::has_log_probs): log_prob stays exact
/// there, and sums and conditioning run in log space.
///
/// The unbounded families (poisson, geometric, negative_binomial) are
/// truncated at the upper end: the support is 0..K with K the smallest value
/// (at or above the mode) where a bound on the remaining mass P(X > K) falls
/// below `tail`. The returned pmf is the law conditioned on X <= K (kept
/// probabilities divided by 1 - dropped); pmf::truncated_mass() returns the
/// dropped mass P(X > K), summed as a series: at most `tail` (it can round to
/// `tail` itself where `tail` is at the bottom of T's range, e.g. denorm_min).
/// The default `tail` is 1e-300 in double and 1e-38 in float (about the
/// smallest normal float): dropping at most that much mass keeps every value
/// whose probability T can represent, so that data in the far tail (an
/// observed count of 50 from poisson(3) + binomial(20, 0.25), probability
/// about e^-67.6) stays possible. A value beyond the kept support has
/// probability 0 (log_prob -inf): choose `tail` smaller, or the parameters,
/// when data can land there.
///
/// Every factory throws marg::invalid_argument naming the argument and its
/// value on bad input, and when the support would exceed INT_MAX values (the
/// length limit of the numeric layer) or overflow int64.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

#include <marg/distributions/pmf.hpp>

namespace marg {

/// @return the default truncation mass of the unbounded families: 1e-300 in
///         double, 1e-38 in float
template <class T>
constexpr T default_tail() noexcept {
  return sizeof(T) == 4 ? T(1e-38f) : T(1e-300);
}

/// A categorical law on lower, lower+1, ... with probabilities proportional to
/// `weights` (normalized in long double).
/// @param weights non-negative finite weights, not all zero, not empty
/// @param lower the value of the first weight
/// @return the pmf
template <class T = double>
pmf<T> categorical(std::vector<T> weights, std::int64_t lower = 0);

/// A categorical law from a braced list, e.g. categorical({0.2, 0.8}).
/// @param weights non-negative finite weights, not all zero, not empty
/// @param lower the value of the first weight
/// @return the pmf
template <class T = double>
pmf<T> categorical(std::initializer_list<T> weights, std::int64_t lower = 0) {
  return categorical<T>(std::vector<T>(weights), lower);
}

/// A categorical law on lower, lower+1, ... with probabilities proportional to
/// exp(log_weights), normalized by their log-sum-exp in long double: weights
/// far below T's range (categorical_log({-800, -801}) is {0.731, 0.269})
/// and logits alike. Where a normalized probability is below T's normal
/// range the pmf keeps the log-probabilities (pmf::has_log_probs).
/// @param log_weights log-weights: numbers or -inf (weight 0), not NaN or
///        +inf, not all -inf, not empty
/// @param lower the value of the first weight
/// @return the pmf
template <class T = double>
pmf<T> categorical_log(std::vector<T> log_weights, std::int64_t lower = 0);

/// Bernoulli: P(1) = p, P(0) = 1 - p, support {0, 1}.
/// @param p success probability in [0, 1]
/// @return the pmf
template <class T = double>
pmf<T> bernoulli(T p);

/// Binomial(n, p) on 0..n (the full support, also for p = 0 or 1).
/// @param n number of trials, 0 <= n < INT_MAX
/// @param p success probability in [0, 1]
/// @return the pmf
template <class T = double>
pmf<T> binomial(std::int64_t n, std::type_identity_t<T> p);

/// Uniform on a..b.
/// @param a the smallest value
/// @param b the largest value (a <= b, at most INT_MAX values)
/// @return the pmf
template <class T = double>
pmf<T> uniform_int(std::int64_t a, std::int64_t b);

/// Beta-binomial(n, a, b) on 0..n: P(k) = C(n,k) B(k+a, n-k+b) / B(a, b).
/// @param n number of trials, 0 <= n < INT_MAX
/// @param a first shape, finite and > 0
/// @param b second shape, finite and > 0
/// @return the pmf
template <class T = double>
pmf<T> beta_binomial(std::int64_t n, std::type_identity_t<T> a, std::type_identity_t<T> b);

/// Poisson(lambda), truncated (see the file comment).
/// @param lambda the mean, finite and >= 0 (0 gives delta(0))
/// @param tail bound on the dropped upper mass, in (0, 1)
/// @return the pmf on 0..K, truncated_mass() = P(X > K)
template <class T = double>
pmf<T> poisson(T lambda, std::type_identity_t<T> tail = default_tail<T>());

/// Geometric: the number of failures before the first success,
/// P(k) = p (1-p)^k on 0..K, truncated (see the file comment).
/// @param p success probability in (0, 1] (1 gives delta(0))
/// @param tail bound on the dropped upper mass, in (0, 1)
/// @return the pmf on 0..K, truncated_mass() = (1-p)^(K+1)
template <class T = double>
pmf<T> geometric(T p, std::type_identity_t<T> tail = default_tail<T>());

/// Negative binomial: the number of failures before the r-th success,
/// P(k) = Gamma(k+r) / (k! Gamma(r)) p^r (1-p)^k on 0..K, truncated.
/// @param r number of successes, finite and > 0 (real)
/// @param p success probability in (0, 1] (1 gives delta(0))
/// @param tail bound on the dropped upper mass, in (0, 1)
/// @return the pmf on 0..K, truncated_mass() = P(X > K)
template <class T = double>
pmf<T> negative_binomial(std::type_identity_t<T> r, std::type_identity_t<T> p,
                         std::type_identity_t<T> tail = default_tail<T>());

/// The point mass at k.
/// @param k the value
/// @return the pmf with support {k}
template <class T = double>
pmf<T> delta(std::int64_t k);

// float and double are instantiated in the library

}  // namespace marg
