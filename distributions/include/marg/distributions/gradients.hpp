/// @file gradients.hpp
/// @brief Gradients of x + y and of log P(x + y = k) with respect to the
/// probabilities of x and y, for a PPL's reverse mode.
///
/// Probabilities are treated as independent variables (no simplex
/// constraint); the renormalization in algebra.hpp changes results only at
/// rounding level and is not differentiated.
#pragma once

#include <cstdint>
#include <vector>

#include <marg/distributions/pmf.hpp>

namespace marg {

/// Gradients with respect to the probabilities of the two terms.
template <class T = double>
struct sum_gradient {
  std::vector<T> first;   ///< d/dp_j, j over the support of x (x.size() values)
  std::vector<T> second;  ///< d/dq_j, j over the support of y (y.size() values)
};

/// Reverse mode through r = x + y: first = band(q, m)^T g, second = band(p, n)^T g,
/// by marg::convolve_grad_p and marg::convolve_grad_q. When x or y keeps
/// log-probabilities, by marg::log_convolve_grad_a and marg::log_convolve_grad_b
/// (the probabilities below T's range count: each element is accurate relative
/// to the sum of its terms' magnitudes, also for g as large as T holds).
/// @param x first term
/// @param y second term
/// @param g df/dr over the support of x + y (x.size() + y.size() - 1 finite values)
/// @return {df/dp, df/dq}
template <class T>
sum_gradient<T> sum_grad(const pmf<T>& x, const pmf<T>& y, const std::vector<T>& g);

/// Gradient of log_prob_sum(x, y, k): d/dp_j = q_{k-j} / P, d/dq_j = p_{k-j} / P
/// with P = P(x + y = k), in O(m + n).
/// @param x first term
/// @param y second term
/// @param k the observed sum
/// @return {d log P / dp, d log P / dq}; marg::invalid_argument when P = 0
template <class T>
sum_gradient<T> log_prob_sum_grad(const pmf<T>& x, const pmf<T>& y, std::int64_t k);

}  // namespace marg
