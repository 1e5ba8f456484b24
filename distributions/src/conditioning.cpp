// Observation of x + y: likelihood and posteriors on the host (hard
// evidence) or through the gradient kernels (soft evidence), in log space
// where the terms or the evidence are below T's range.
#include <marg/distributions/conditioning.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/log_convolve.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "detail.hpp"

namespace marg {
namespace {

using ld = long double;

// normalized posterior from long double weights w on lower.., zero ends trimmed
template <class T>
pmf<T> posterior_of(const std::vector<ld>& w, std::int64_t lower, ld total, bool reversed) {
  std::size_t a = 0, b = w.size();
  while (a < b && w[a] == 0) ++a;
  while (b > a && w[b - 1] == 0) --b;
  array<T> r(b - a);
  T* d = r.data();
  bool tiny = false;
  for (std::size_t i = a; i < b; ++i) {
    const std::size_t o = reversed ? b - 1 - i : i - a;
    const ld v = w[i] / total;
    d[o] = static_cast<T>(v);
    tiny = tiny || (v > 0 && v < std::numeric_limits<T>::min());
  }
  // reversed: w[i] is the weight of lower - i, so the kept values run down from lower - a
  const std::int64_t first =
      reversed ? lower - static_cast<std::int64_t>(b - 1) : lower + static_cast<std::int64_t>(a);
  if (!tiny) return pmf<T>(detail::trusted, std::move(r), first);
  // posterior values below T's range (the long double weights hold them): kept as logs
  array<T> l(b - a);
  const ld log_total = std::log(total);
  for (std::size_t i = a; i < b; ++i)
    l.data()[reversed ? b - 1 - i : i - a] = static_cast<T>(std::log(w[i]) - log_total);
  return pmf<T>(detail::trusted, std::move(r), std::move(l), first);
}

template <class T>
void check_terms(const char* f, const pmf<T>& x, const pmf<T>& y) {
  detail::check_nonempty(f, "x", x);
  detail::check_nonempty(f, "y", y);
}

template <class T>
sum_posterior<T> impossible() {
  return {-std::numeric_limits<T>::infinity(), pmf<T>(), pmf<T>()};
}

// soft evidence: L already validated, log_scale added to the log likelihood
template <class T>
sum_posterior<T> condition_soft(const pmf<T>& x, const pmf<T>& y, const T* L, ld log_scale) {
  const int m = static_cast<int>(x.size()), n = static_cast<int>(y.size());
  array<T> gp(static_cast<std::size_t>(m)), gq(static_cast<std::size_t>(n));
  convolve_grad_p<T>(m, n, L, 1, y.data(), 1, gp.data(), 1);
  convolve_grad_q<T>(m, n, L, 1, x.data(), 1, gq.data(), 1);
  detail::wait_for_stream(gp.stream());
  detail::wait_for_stream(gq.stream());
  std::vector<ld> wx(m), wy(n);
  ld sx = 0, sy = 0;
  for (int j = 0; j < m; ++j) sx += wx[j] = static_cast<ld>(x.data()[j]) * gp.data()[j];
  for (int j = 0; j < n; ++j) sy += wy[j] = static_cast<ld>(y.data()[j]) * gq.data()[j];
  if (!(sx > 0) || !(sy > 0)) return impossible<T>();
  return {static_cast<T>(std::log(sx) + log_scale), posterior_of<T>(wx, x.lower(), sx, false),
          posterior_of<T>(wy, y.lower(), sy, false)};
}

// a posterior from log weights w on lower.. (reversed: on lower, lower - 1, ...),
// -inf ends trimmed
template <class T>
pmf<T> log_posterior_of(const std::vector<ld>& w, std::int64_t lower, bool reversed) {
  std::size_t a = 0, b = w.size();
  while (a < b && w[a] == -INFINITY) ++a;
  while (b > a && w[b - 1] == -INFINITY) --b;
  std::vector<ld> kept(w.begin() + static_cast<std::ptrdiff_t>(a),
                       w.begin() + static_cast<std::ptrdiff_t>(b));
  if (reversed) std::reverse(kept.begin(), kept.end());
  const std::int64_t first =
      reversed ? lower - static_cast<std::int64_t>(b - 1) : lower + static_cast<std::int64_t>(a);
  return detail::pmf_from_logs<T>(kept.data(), kept.size(), first);
}

// The likelihood-weighted diagonal sums of one term in log space:
// g_j = log sum_i exp(lo_{i-j} + ll_i) for j = 0 .. m - 1, where lo holds the
// other term's n log-probabilities and ll the m + n - 1 log-likelihoods. It is
// a log-space correlation: log_convolve of ll with lo reversed, read from
// n - 1 on.
template <class T>
std::vector<T> log_correlate(const array<T>& ll, const array<T>& lo, int m) {
  const int n = static_cast<int>(lo.size()), len = static_cast<int>(ll.size());
  array<T> reversed(lo.size());
  std::reverse_copy(lo.data(), lo.data() + n, reversed.data());
  array<T> r(static_cast<std::size_t>(len + n - 1));
  log_convolve<T>(len, n, ll.data(), 1, reversed.data(), 1, r.data(), 1, r.stream());
  detail::wait_for_stream(r.stream());
  return std::vector<T>(r.data() + (n - 1), r.data() + (n - 1 + m));
}

// soft evidence in log space, for terms or likelihoods below T's range:
// log_likelihood validated (finite or -inf), log_scale added to the result
template <class T>
sum_posterior<T> condition_soft_log(const pmf<T>& x, const pmf<T>& y, const T* log_likelihood,
                                    ld log_scale) {
  const int m = static_cast<int>(x.size()), n = static_cast<int>(y.size());
  array<T> ll(static_cast<std::size_t>(m + n - 1));
  std::copy(log_likelihood, log_likelihood + (m + n - 1), ll.data());
  const array<T> la = detail::log_probs_array(x), lb = detail::log_probs_array(y);
  const std::vector<T> gx = log_correlate(ll, lb, m), gy = log_correlate(ll, la, n);
  std::vector<ld> wx(static_cast<std::size_t>(m)), wy(static_cast<std::size_t>(n));
  ld mx = -INFINITY;
  for (int j = 0; j < m; ++j) mx = std::max(mx, wx[j] = static_cast<ld>(la.data()[j]) + gx[j]);
  for (int j = 0; j < n; ++j) wy[j] = static_cast<ld>(lb.data()[j]) + gy[j];
  if (mx == -INFINITY) return impossible<T>();
  ld s = 0;
  for (const ld v : wx) s += std::exp(v - mx);
  return {static_cast<T>(mx + std::log(s) + log_scale), log_posterior_of<T>(wx, x.lower(), false),
          log_posterior_of<T>(wy, y.lower(), false)};
}

}  // namespace

template <class T>
T log_prob_sum(const pmf<T>& x, const pmf<T>& y, std::int64_t k) {
  check_terms("marg::log_prob_sum", x, y);
  const detail::operands_device on("marg::log_prob_sum", "x", x.device(), "y", y.device());
  const auto d = detail::diagonal_of(x, y, k);
  if (d.empty()) return -std::numeric_limits<T>::infinity();
  if (x.has_log_probs() || y.has_log_probs()) {
    std::vector<ld> w;
    return static_cast<T>(detail::log_weights(x, y, k, d, w));
  }
  const T* p = x.data() + (d.lo - x.lower());
  const T* q = y.data() + (k - d.lo - y.lower());  // q walks down as p walks up
  ld s = 0;
  for (std::int64_t i = 0; i <= d.hi - d.lo; ++i) s += static_cast<ld>(p[i]) * q[-i];
  return static_cast<T>(std::log(s));
}

template <class T>
sum_posterior<T> condition_on_sum(const pmf<T>& x, const pmf<T>& y, std::int64_t k) {
  check_terms("marg::condition_on_sum", x, y);
  const detail::operands_device on("marg::condition_on_sum", "x", x.device(), "y", y.device());
  const auto d = detail::diagonal_of(x, y, k);
  if (d.empty()) return impossible<T>();
  if (x.has_log_probs() || y.has_log_probs()) {
    // in log space: the terms and the posteriors may be far below T's range
    std::vector<ld> w;
    const ld total = detail::log_weights(x, y, k, d, w);
    if (total == -INFINITY) return impossible<T>();
    return {static_cast<T>(total), log_posterior_of<T>(w, d.lo, false),
            log_posterior_of<T>(w, k - d.lo, true)};
  }
  const T* p = x.data() + (d.lo - x.lower());
  const T* q = y.data() + (k - d.lo - y.lower());
  std::vector<ld> w(static_cast<std::size_t>(d.hi - d.lo + 1));
  ld s = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    s += w[i] = static_cast<ld>(p[i]) * q[-static_cast<std::int64_t>(i)];
  if (!(s > 0)) return impossible<T>();
  // y = k - j runs down from k - d.lo
  return {static_cast<T>(std::log(s)), posterior_of<T>(w, d.lo, s, false),
          posterior_of<T>(w, k - d.lo, s, true)};
}

template <class T>
sum_posterior<T> condition_on_sum(const pmf<T>& x, const pmf<T>& y,
                                  const std::vector<T>& likelihood) {
  const char* f = "marg::condition_on_sum";
  detail::check_over_sum(f, "likelihood", x, y, likelihood);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  detail::check_weights(f, "likelihood", likelihood.data(),
                        static_cast<std::int64_t>(likelihood.size()));
  if (!x.has_log_probs() && !y.has_log_probs() &&
      !detail::soft_products_underflow(x.data(), static_cast<int>(x.size()), y.data(),
                                       static_cast<int>(y.size()), likelihood.data())) {
    const sum_posterior<T> linear = condition_soft(x, y, likelihood.data(), 0);
    if (linear.log_likelihood != -std::numeric_limits<T>::infinity()) return linear;
  }
  // terms below T's range, or products that underflow: in log space
  std::vector<T> ll(likelihood.size());
  for (std::size_t i = 0; i < ll.size(); ++i) ll[i] = std::log(likelihood[i]);
  return condition_soft_log(x, y, ll.data(), 0);
}

template <class T>
sum_posterior<T> condition_on_sum_log(const pmf<T>& x, const pmf<T>& y,
                                      const std::vector<T>& log_likelihood) {
  const char* f = "marg::condition_on_sum_log";
  detail::check_over_sum(f, "log_likelihood", x, y, log_likelihood);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  T mx = -std::numeric_limits<T>::infinity();
  for (std::size_t i = 0; i < log_likelihood.size(); ++i) {
    const T v = log_likelihood[i];
    MARG_EXPECTS(!std::isnan(v) && v != std::numeric_limits<T>::infinity(),
                 detail::bad_real_argument(f, ("log_likelihood[" + std::to_string(i) + "]").c_str(),
                                           v, "finite or -inf"));
    mx = std::max(mx, v);
  }
  if (mx == -std::numeric_limits<T>::infinity()) return impossible<T>();
  // the linear path when every term and every scaled likelihood fits T
  bool fits = !x.has_log_probs() && !y.has_log_probs();
  std::vector<T> L(log_likelihood.size());
  for (std::size_t i = 0; i < L.size(); ++i) {
    const T v = log_likelihood[i] - mx;
    fits = fits && (v == -std::numeric_limits<T>::infinity() || v >= detail::log_min_normal<T>);
    L[i] = std::exp(v);
  }
  if (fits) {
    const sum_posterior<T> linear = condition_soft(x, y, L.data(), static_cast<ld>(mx));
    if (linear.log_likelihood != -std::numeric_limits<T>::infinity()) return linear;
  }
  return condition_soft_log(x, y, log_likelihood.data(), 0);
}

template <class T>
pmf<T> sum_given_evidence(const pmf<T>& x, const pmf<T>& y, const std::vector<T>& likelihood) {
  const char* f = "marg::sum_given_evidence";
  const int len = detail::check_over_sum(f, "likelihood", x, y, likelihood);
  const detail::operands_device on(f, "x", x.device(), "y", y.device());
  detail::check_weights(f, "likelihood", likelihood.data(),
                        static_cast<std::int64_t>(likelihood.size()));
  array<T> r(static_cast<std::size_t>(len));
  convolve<T>(static_cast<int>(x.size()), static_cast<int>(y.size()), x.data(), 1, y.data(), 1,
              r.data(), 1);
  detail::wait_for_stream(r.stream());
  std::vector<ld> w(len);
  ld s = 0;
  for (int i = 0; i < len; ++i) s += w[i] = static_cast<ld>(r.data()[i]) * likelihood[i];
  if (!(s > 0)) return pmf<T>();
  return posterior_of<T>(w, x.lower() + y.lower(), s, false);
}

#define MARG_INSTANTIATE_CONDITIONING(T)                                                     \
  template T log_prob_sum<T>(const pmf<T>&, const pmf<T>&, std::int64_t);                    \
  template sum_posterior<T> condition_on_sum<T>(const pmf<T>&, const pmf<T>&, std::int64_t); \
  template sum_posterior<T> condition_on_sum<T>(const pmf<T>&, const pmf<T>&,                \
                                                const std::vector<T>&);                      \
  template sum_posterior<T> condition_on_sum_log<T>(const pmf<T>&, const pmf<T>&,            \
                                                    const std::vector<T>&);                  \
  template pmf<T> sum_given_evidence<T>(const pmf<T>&, const pmf<T>&, const std::vector<T>&);
MARG_INSTANTIATE_CONDITIONING(float)
MARG_INSTANTIATE_CONDITIONING(double)

}  // namespace marg
