/// @file conditioning.hpp
/// @brief Observation of a sum of independent pmfs: likelihood, posteriors,
/// joint sampling given the sum.
///
/// With x (probabilities p) and y (q) independent:
///
///     log_prob_sum(x, y, k)      = log sum_j p_j q_{k-j}
///     condition_on_sum(x, y, k)  : P(x = j | x + y = k) ∝ p_j q_{k-j}
///     condition_on_sum(x, y, L)  : P(x = j | evidence) ∝ p_j (band(q,m)^T L)_j
///                                  P(y = j | evidence) ∝ q_j (band(p,n)^T L)_j
///
/// The hard observation costs O(min(m, n)) on the host (only the
/// anti-diagonal of the joint that meets k is read), summed in long double so
/// that products below the range of T still count. The soft observation runs
/// the numeric layer's gradient kernels (convolve_grad_p / convolve_grad_q).
///
/// An impossible observation (k outside the support of x + y, or zero
/// probability) gives log_likelihood = -inf and *empty* posteriors: every
/// accessor of an empty pmf throws marg::invalid_argument saying so. No
/// NaN is ever produced. Posterior supports are trimmed to the values with
/// positive posterior probability.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <marg/distributions/pmf.hpp>

namespace marg {

/// The result of observing a sum of two independent pmfs.
template <class T = double>
struct sum_posterior {
  T log_likelihood;  ///< log P(evidence); -inf when impossible
  pmf<T> first;      ///< posterior of x (empty when impossible)
  pmf<T> second;     ///< posterior of y (empty when impossible)
};

/// log P(x + y = k) in O(min(m, n)), without forming x + y.
/// @param x first term
/// @param y second term
/// @param k the observed sum
/// @return the log probability; -inf when impossible
template <class T>
T log_prob_sum(const pmf<T>& x, const pmf<T>& y, std::int64_t k);

/// Posterior marginals of x and y given x + y = k, in O(min(m, n)).
/// @param x first term
/// @param y second term
/// @param k the observed sum
/// @return {log P(x + y = k), posterior of x, posterior of y}
template <class T>
sum_posterior<T> condition_on_sum(const pmf<T>& x, const pmf<T>& y, std::int64_t k);

/// Posterior marginals of x and y given soft evidence on x + y.
/// @param x first term
/// @param y second term
/// @param likelihood L_i = P(evidence | x + y = x.lower() + y.lower() + i),
///        x.size() + y.size() - 1 finite non-negative values
/// @return {log sum_i P(x + y = i) L_i, posterior of x, posterior of y}
template <class T>
sum_posterior<T> condition_on_sum(const pmf<T>& x, const pmf<T>& y,
                                  const std::vector<T>& likelihood);

/// Soft evidence given as log likelihoods (for evidence far below the range
/// of T: the maximum is factored out before exponentiating).
/// @param x first term
/// @param y second term
/// @param log_likelihood log L_i over the support of x + y (x.size() + y.size() - 1
///        values, each finite or -inf)
/// @return {log sum_i P(x + y = i) L_i, posterior of x, posterior of y}
template <class T>
sum_posterior<T> condition_on_sum_log(const pmf<T>& x, const pmf<T>& y,
                                      const std::vector<T>& log_likelihood);

/// Draws (x, y) jointly given x + y = k.
/// @param x first term
/// @param y second term
/// @param k the observed sum
/// @param g a uniform random bit generator
/// @return (j, k - j); marg::invalid_argument when the observation is impossible
template <class T, class URBG>
std::pair<std::int64_t, std::int64_t> sample_given_sum(const pmf<T>& x, const pmf<T>& y,
                                                       std::int64_t k, URBG& g) {
  const auto post = condition_on_sum(x, y, k);
  const std::int64_t j = post.first.sample(g);
  return {j, k - j};
}

/// The law of x + y given soft evidence L (weights P(x+y=i) L_i, normalized).
/// @param x first term
/// @param y second term
/// @param likelihood as for condition_on_sum
/// @return the posterior of the sum; empty when the evidence is impossible
template <class T>
pmf<T> sum_given_evidence(const pmf<T>& x, const pmf<T>& y, const std::vector<T>& likelihood);

/// Draws (x, y) jointly given soft evidence on the sum: the sum from
/// sum_given_evidence, then (x, y) given it.
/// @param x first term
/// @param y second term
/// @param likelihood as for condition_on_sum
/// @param g a uniform random bit generator
/// @return (x, y); marg::invalid_argument when the evidence is impossible
template <class T, class URBG>
std::pair<std::int64_t, std::int64_t> sample_given_evidence(const pmf<T>& x, const pmf<T>& y,
                                                            const std::vector<T>& likelihood,
                                                            URBG& g) {
  const std::int64_t k = sum_given_evidence(x, y, likelihood).sample(g);
  return sample_given_sum(x, y, k, g);
}

}  // namespace marg
