/// @file factories.hpp
/// @brief Factories of the common discrete families as marg::pmf<T>.
///
/// Probabilities are computed in long double log space (lgamma, log1p) and
/// exponentiated once, so that the tails of large supports are correct down
/// to the smallest normal T (binomial(100000, 0.5) included). Each factory
/// normalizes its long double values once by their sum, which absorbs the
/// rounding of the log-gamma constants; entries below the range of T become 0.
///
/// The unbounded families (poisson, geometric, negative_binomial) are
/// truncated at the upper end: the support is 0..K with K the smallest value
/// (at or above the mode) where a bound on the remaining mass P(X > K) falls
/// below `tail`. The returned pmf is the law conditioned on X <= K (kept
/// probabilities divided by 1 - dropped); pmf::truncated_mass() returns the
/// dropped mass P(X > K), summed as a series: at most `tail` (it can round to
/// `tail` itself where `tail` is at the bottom of T's range, e.g. denorm_min).
/// The default `tail` is the machine epsilon of T, the level of rounding in
/// the total mass.
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

/// @return the default truncation mass of the unbounded families: epsilon of T
template <class T>
constexpr T default_tail() noexcept {
  return std::numeric_limits<T>::epsilon();
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
