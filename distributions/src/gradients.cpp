// Gradients of x + y (through the numeric gradient kernels) and of
// log P(x + y = k) (on the host in log space, O(m + n)).
#include <marg/distributions/gradients.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/log_convolve.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "detail.hpp"

namespace marg {

template <class T>
sum_gradient<T> sum_grad(const pmf<T>& x, const pmf<T>& y, const std::vector<T>& g) {
  const char* f = "marg::sum_grad";
  detail::check_over_sum(f, "g", x, y, g);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  for (std::size_t i = 0; i < g.size(); ++i)
    MARG_EXPECTS(
        std::isfinite(g[i]),
        detail::bad_real_argument(f, ("g[" + std::to_string(i) + "]").c_str(), g[i], "finite"));
  const int m = static_cast<int>(x.size()), n = static_cast<int>(y.size());
  array<T> gp(static_cast<std::size_t>(m)), gq(static_cast<std::size_t>(n));
  if (!x.has_log_probs() && !y.has_log_probs()) {
    convolve_grad_p<T>(m, n, g.data(), 1, y.data(), 1, gp.data(), 1);
    convolve_grad_q<T>(m, n, g.data(), 1, x.data(), 1, gq.data(), 1);
    return {gp.to_vector(), gq.to_vector()};
  }
  // A term keeps log-probabilities: its stored probabilities lose the values
  // below T's range, which a large g (such as 1 / P(x + y = k) of a far-tail
  // sum) makes count. log_convolve's vector-Jacobian products with the other
  // operand and r set to log 1 are these products in log space:
  // sum_i g_i exp(0 + log q_{i-j} - 0) = (band(q, m)^T g)_j, each element
  // accurate relative to the sum of its terms' magnitudes.
  const array<T> la = detail::log_probs_array(x), lb = detail::log_probs_array(y);
  array<T> za(static_cast<std::size_t>(m)), zb(static_cast<std::size_t>(n)), zr(g.size());
  std::fill(za.data(), za.data() + m, T(0));
  std::fill(zb.data(), zb.data() + n, T(0));
  std::fill(zr.data(), zr.data() + zr.size(), T(0));
  log_convolve_grad_a<T>(m, n, g.data(), 1, za.data(), 1, lb.data(), 1, zr.data(), 1, gp.data(), 1);
  log_convolve_grad_b<T>(m, n, g.data(), 1, la.data(), 1, zb.data(), 1, zr.data(), 1, gq.data(), 1);
  return {gp.to_vector(), gq.to_vector()};
}

template <class T>
sum_gradient<T> log_prob_sum_grad(const pmf<T>& x, const pmf<T>& y, std::int64_t k) {
  const char* f = "marg::log_prob_sum_grad";
  detail::check_nonempty(f, "x", x);
  detail::check_nonempty(f, "y", y);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  sum_gradient<T> r{std::vector<T>(x.size(), T(0)), std::vector<T>(y.size(), T(0))};
  const auto d = detail::diagonal_of(x, y, k);
  using ld = long double;
  ld s = 0;
  if (!x.has_log_probs() && !y.has_log_probs() && !d.empty()) {
    for (std::int64_t j = d.lo; j <= d.hi; ++j) s += static_cast<ld>(x.prob(j)) * y.prob(k - j);
  }
  if (s >= std::numeric_limits<T>::min()) {
    for (std::int64_t j = d.lo; j <= d.hi; ++j) {
      r.first[j - x.lower()] = static_cast<T>(y.prob(k - j) / s);
      r.second[k - j - y.lower()] = static_cast<T>(x.prob(j) / s);
    }
    return r;
  }
  // in log space, for terms that keep log-probabilities or a likelihood below
  // T's range: d/dp_j = exp(log q_{k-j} - log P(x + y = k))
  std::vector<ld> w;
  const ld log_s = d.empty() ? -INFINITY : detail::log_weights(x, y, k, d, w);
  MARG_EXPECTS(log_s != -INFINITY,
               std::string(f) + ": k = " + std::to_string(k) +
                   " is impossible (P(x + y = k) = 0, log likelihood -inf): no gradient");
  for (std::int64_t j = d.lo; j <= d.hi; ++j) {
    r.first[j - x.lower()] = static_cast<T>(std::exp(detail::log_at(y, k - j) - log_s));
    r.second[k - j - y.lower()] = static_cast<T>(std::exp(detail::log_at(x, j) - log_s));
  }
  return r;
}

#define MARG_INSTANTIATE_GRADIENTS(T)                                                        \
  template sum_gradient<T> sum_grad<T>(const pmf<T>&, const pmf<T>&, const std::vector<T>&); \
  template sum_gradient<T> log_prob_sum_grad<T>(const pmf<T>&, const pmf<T>&, std::int64_t);
MARG_INSTANTIATE_GRADIENTS(float)
MARG_INSTANTIATE_GRADIENTS(double)

}  // namespace marg
