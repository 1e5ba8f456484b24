// Factories: log-space evaluation in long double, one normalization, and
// upper truncation of the unbounded families.
#include <marg/distributions/factories.hpp>

#include <climits>
#include <cmath>
#include <limits>
#include <string>

#include "detail.hpp"

namespace marg {
namespace {

using detail::bad_argument;
using detail::bad_real_argument;
using detail::check_probability;
using detail::check_real;

using ld = long double;

// log C(n, k)
ld lchoose(ld n, ld k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// exp(lp - log sum exp(lp)) into a pmf on lower.., with the log-probabilities
// kept where some probability is below T's range
template <class T>
pmf<T> from_log(const std::vector<ld>& lp, std::int64_t lower, ld truncated = 0) {
  return detail::pmf_from_logs<T>(lp.data(), lp.size(), lower, static_cast<T>(truncated));
}

void check_trials(const char* f, std::int64_t n) {
  MARG_EXPECTS(n >= 0 && n < INT_MAX, bad_argument(f, "n", n, "in 0..INT_MAX-1"));
}

void check_tail(const char* f, double tail) {
  check_real(f, "tail", tail, 0, 1, true, true, "in (0, 1)");
}

// Truncation of an unbounded family on 0, 1, ... with log pmf lp(k) and
// rsup(j) >= p(i+1)/p(i) for all i >= j, rsup < 1, both valid from `mode`
// on, where p is non-increasing. Returns the smallest K >= mode with
// p(K+1) / (1 - rsup(K+1)) < tail: a bound on P(X > K).
template <class LP, class RS>
std::int64_t truncation_point(const char* f, const char* param, double value, std::int64_t mode,
                              LP lp, RS rsup, ld tail) {
  auto bound_below = [&](std::int64_t k) { return std::exp(lp(k + 1)) / (1 - rsup(k + 1)) < tail; };
  const std::int64_t limit = INT_MAX - 1;  // support 0..K must fit the numeric layer
  auto too_long = [&] {
    return bad_real_argument(f, param, value,
                             "such that the truncated support has at most INT_MAX values");
  };
  MARG_EXPECTS(mode <= limit, too_long());
  if (bound_below(mode)) return mode;
  // exponential search, then bisection, on the monotone bound
  std::int64_t lo = mode, step = 1, hi;
  for (;;) {
    hi = std::min<std::int64_t>(limit, mode + step);
    if (bound_below(hi)) break;
    MARG_EXPECTS(hi < limit, too_long());
    lo = hi;
    step *= 2;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (bound_below(mid) ? hi : lo) = mid;
  }
  return hi;
}

// P(X > K) by the series, finished with the geometric bound on what is left
template <class LP, class RS>
ld dropped_mass(std::int64_t K, LP lp, RS rsup) {
  ld s = 0;
  std::int64_t j = K + 1;
  for (int it = 0; it < 1000000; ++it, ++j) {
    const ld t = std::exp(lp(j));
    s += t;
    if (t <= s * 1e-21L) return s;
  }
  return s + std::exp(lp(j)) / (1 - rsup(j));
}

template <class T, class LP, class RS>
pmf<T> truncated(const char* f, const char* param, double value, std::int64_t mode, LP lp, RS rsup,
                 T tail) {
  const std::int64_t K = truncation_point(f, param, value, mode, lp, rsup, tail);
  std::vector<ld> v(static_cast<std::size_t>(K + 1));
  for (std::int64_t k = 0; k <= K; ++k) v[k] = lp(k);
  return from_log<T>(v, 0, dropped_mass(K, lp, rsup));
}

}  // namespace

template <class T>
pmf<T> categorical(std::vector<T> weights, std::int64_t lower) {
  const char* f = "marg::categorical";
  MARG_EXPECTS(!weights.empty(), std::string(f) + ": weights is empty (the support must not be)");
  MARG_EXPECTS(
      weights.size() <= INT_MAX,
      bad_argument(f, "weights.size()", static_cast<std::int64_t>(weights.size()), "<= INT_MAX"));
  ld s = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    detail::check_weight(f, "weights", i, weights[i]);
    s += weights[i];
  }
  MARG_EXPECTS(s > 0,
               std::string(f) + ": all " + std::to_string(weights.size()) + " weights are zero");
  detail::add_checked(f, "lower + size - 1", lower, static_cast<std::int64_t>(weights.size()) - 1);
  array<T> a(weights.size());
  T* d = a.data();
  for (std::size_t i = 0; i < weights.size(); ++i) d[i] = static_cast<T>(weights[i] / s);
  return pmf<T>(detail::trusted, std::move(a), lower);
}

template <class T>
pmf<T> categorical_log(std::vector<T> log_weights, std::int64_t lower) {
  const char* f = "marg::categorical_log";
  MARG_EXPECTS(!log_weights.empty(),
               std::string(f) + ": log_weights is empty (the support must not be)");
  MARG_EXPECTS(log_weights.size() <= INT_MAX,
               bad_argument(f, "log_weights.size()", static_cast<std::int64_t>(log_weights.size()),
                            "<= INT_MAX"));
  bool any = false;
  for (std::size_t i = 0; i < log_weights.size(); ++i) {
    const T w = log_weights[i];
    MARG_EXPECTS(!std::isnan(w) && w != std::numeric_limits<T>::infinity(),
                 bad_real_argument(f, ("log_weights[" + std::to_string(i) + "]").c_str(),
                                   static_cast<double>(w), "a number or -inf, not NaN or +inf"));
    any = any || w != -std::numeric_limits<T>::infinity();
  }
  MARG_EXPECTS(any, std::string(f) + ": all " + std::to_string(log_weights.size()) +
                        " log-weights are -inf (every weight is zero)");
  detail::add_checked(f, "lower + size - 1", lower,
                      static_cast<std::int64_t>(log_weights.size()) - 1);
  return detail::pmf_from_logs<T>(log_weights.data(), log_weights.size(), lower);
}

template <class T>
pmf<T> bernoulli(T p) {
  check_probability("marg::bernoulli", "p", p);
  return pmf<T>(detail::trusted, array<T>{T(1) - p, p}, 0);
}

template <class T>
pmf<T> binomial(std::int64_t n, std::type_identity_t<T> p) {
  const char* f = "marg::binomial";
  check_trials(f, n);
  check_probability(f, "p", p);
  std::vector<ld> lp(static_cast<std::size_t>(n + 1), -INFINITY);
  if (p == 0 || p == 1) {
    lp[p == 0 ? 0 : n] = 0;  // log(0) * 0 would give NaN
  } else {
    const ld lpp = std::log(static_cast<ld>(p)), lq = std::log1p(-static_cast<ld>(p));
    for (std::int64_t k = 0; k <= n; ++k) lp[k] = lchoose(n, k) + k * lpp + (n - k) * lq;
  }
  return from_log<T>(lp, 0);
}

template <class T>
pmf<T> uniform_int(std::int64_t a, std::int64_t b) {
  const char* f = "marg::uniform_int";
  MARG_EXPECTS(a <= b, std::string(f) + ": a = " + std::to_string(a) +
                           " > b = " + std::to_string(b) + " (the support would be empty)");
  const std::int64_t span = detail::sub_checked(f, "b - a", b, a);
  // the support size as unsigned: span + 1 overflows int64 at span = INT64_MAX
  MARG_EXPECTS(span < INT_MAX, std::string(f) + ": b - a + 1 = " +
                                   std::to_string(static_cast<std::uint64_t>(span) + 1) +
                                   " (must be <= INT_MAX)");
  return pmf<T>(detail::trusted, array<T>(static_cast<std::size_t>(span + 1), T(1) / T(span + 1)),
                a);
}

template <class T>
pmf<T> beta_binomial(std::int64_t n, std::type_identity_t<T> a, std::type_identity_t<T> b) {
  const char* f = "marg::beta_binomial";
  check_trials(f, n);
  check_real(f, "a", a, 0, INFINITY, true, true, "finite and > 0");
  check_real(f, "b", b, 0, INFINITY, true, true, "finite and > 0");
  // log P(0) = sum_l log((b + l) / (a + b + l)), then the ratio
  // P(k+1) / P(k) = (n - k) (a + k) / ((k + 1) (b + n - k - 1)). Differences of
  // lgamma lose every digit once a or b is large (a = b = 1e30 gave P(0) =
  // 8.6e-50 for 3.5e-4803); these terms stay well conditioned for any a, b.
  const ld la = a, lb = b;
  std::vector<ld> lp(static_cast<std::size_t>(n + 1));
  ld l0 = 0;
  // a difference of logs: log1p(-a / (a + b + l)) is -inf once b << a
  for (std::int64_t l = 0; l < n; ++l) l0 += std::log(lb + l) - std::log(la + lb + l);
  lp[0] = l0;
  for (std::int64_t k = 0; k < n; ++k)
    lp[k + 1] = lp[k] + std::log(static_cast<ld>(n - k) / (k + 1)) +
                std::log((la + k) / (lb + (n - k - 1)));
  return from_log<T>(lp, 0);
}

template <class T>
pmf<T> poisson(T lambda, std::type_identity_t<T> tail) {
  const char* f = "marg::poisson";
  check_real(f, "lambda", lambda, 0, INFINITY, false, true, "finite and >= 0");
  check_tail(f, tail);
  if (lambda == 0) return delta<T>(0);
  const ld l = lambda, ll = std::log(l);
  auto lp = [&](std::int64_t k) { return k * ll - l - std::lgamma(static_cast<ld>(k) + 1); };
  // p(i+1)/p(i) = lambda/(i+1), decreasing
  auto rsup = [&](std::int64_t j) { return l / (static_cast<ld>(j) + 1); };
  const ld mode = std::floor(l);
  return truncated<T>(f, "lambda", lambda, static_cast<std::int64_t>(std::min<ld>(mode, INT_MAX)),
                      lp, rsup, tail);
}

template <class T>
pmf<T> geometric(T p, std::type_identity_t<T> tail) {
  const char* f = "marg::geometric";
  check_real(f, "p", p, 0, 1, true, false, "in (0, 1]");
  check_tail(f, tail);
  if (p == 1) return delta<T>(0);
  const ld lq = std::log1p(-static_cast<ld>(p)), lpp = std::log(static_cast<ld>(p));
  auto lp = [&](std::int64_t k) { return lpp + k * lq; };
  auto rsup = [&](std::int64_t) { return std::exp(lq); };
  return truncated<T>(f, "p", p, 0, lp, rsup, tail);
}

template <class T>
pmf<T> negative_binomial(std::type_identity_t<T> r, std::type_identity_t<T> p,
                         std::type_identity_t<T> tail) {
  const char* f = "marg::negative_binomial";
  check_real(f, "r", r, 0, INFINITY, true, true, "finite and > 0");
  check_real(f, "p", p, 0, 1, true, false, "in (0, 1]");
  check_tail(f, tail);
  if (p == 1) return delta<T>(0);
  const ld lr = r, lq = std::log1p(-static_cast<ld>(p)), q = std::exp(lq);
  const ld c = lr * std::log(static_cast<ld>(p)) - std::lgamma(lr);
  auto lp = [&](std::int64_t k) {
    const ld kk = k;
    return std::lgamma(kk + lr) - std::lgamma(kk + 1) + c + kk * lq;
  };
  // p(i+1)/p(i) = (i+r)/(i+1) q: decreasing to q when r >= 1, increasing to q when r < 1
  auto rsup = [&](std::int64_t j) {
    const ld jj = j;
    return std::max<ld>((jj + lr) / (jj + 1), 1) * q;
  };
  const ld mode = lr > 1 ? std::floor((lr - 1) * q / p) : 0;
  return truncated<T>(f, "p", p, static_cast<std::int64_t>(std::min<ld>(mode, INT_MAX)), lp, rsup,
                      tail);
}

template <class T>
pmf<T> delta(std::int64_t k) {
  return pmf<T>(detail::trusted, array<T>{T(1)}, k);
}

#define MARG_INSTANTIATE_FACTORIES(T)                               \
  template pmf<T> categorical<T>(std::vector<T>, std::int64_t);     \
  template pmf<T> categorical_log<T>(std::vector<T>, std::int64_t); \
  template pmf<T> bernoulli<T>(T);                                  \
  template pmf<T> binomial<T>(std::int64_t, T);                     \
  template pmf<T> uniform_int<T>(std::int64_t, std::int64_t);       \
  template pmf<T> beta_binomial<T>(std::int64_t, T, T);             \
  template pmf<T> poisson<T>(T, T);                                 \
  template pmf<T> geometric<T>(T, T);                               \
  template pmf<T> negative_binomial<T>(T, T, T);                    \
  template pmf<T> delta<T>(std::int64_t);
MARG_INSTANTIATE_FACTORIES(float)
MARG_INSTANTIATE_FACTORIES(double)

}  // namespace marg
