// Internal helpers of the distributions layer: storage, overflow-checked
// support arithmetic, argument checks.
#pragma once

#include <marg/distributions/pmf.hpp>
#include <marg/numeric/array.hpp>
#include <marg/numeric/device.hpp>
#include <marg/numeric/error.hpp>

#include "parallel.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace marg::detail {

template <class T>
struct pmf_storage {
  explicit pmf_storage(array<T>&& p) : probs(std::move(p)) {}
  pmf_storage(array<T>&& p, array<T>&& l) : probs(std::move(p)), logs(std::move(l)) {}
  array<T> probs;
  // log-probabilities, kept when some probability is below T's normal range
  // (probs holds 0 or a denormal there); empty otherwise
  array<T> logs;
  // cumulative sums for cdf and sampling, built on first use
  mutable std::once_flag once;
  mutable std::vector<long double> cum;
  const std::vector<long double>& cumulative() const {
    std::call_once(once, [this] {
      cum.resize(probs.size());
      long double s = 0;
      const T* p = probs.data();
      for (std::size_t i = 0; i < probs.size(); ++i) cum[i] = (s += p[i]);
    });
    return cum;
  }
};

/// The device of one operation's operands, made current for the helper's
/// lifetime: an operation runs on the device its operands live on (torch's
/// rule), and operands on two devices are a marg::invalid_argument naming
/// both. -1 (made without a usable GPU) matches any device.
class operands_device {
 public:
  /// @param function the public function, for the error
  /// @param x_name first operand's name
  /// @param x its device
  /// @param y_name second operand's name
  /// @param y its device
  operands_device(const char* function, const char* x_name, int x, const char* y_name, int y)
      : guard_(pick(function, x_name, x, y_name, y)) {}

 private:
  static int pick(const char* function, const char* x_name, int x, const char* y_name, int y) {
    MARG_EXPECTS(x < 0 || y < 0 || x == y,
                 std::string(function) + ": " + x_name + " lives on CUDA device " +
                     std::to_string(x) + " and " + y_name + " on device " + std::to_string(y) +
                     " (operands must share a device; libmarg never copies between devices)");
    return x >= 0 ? x : y;
  }
  device_guard guard_;
};

/// a + b, or marg::invalid_argument naming `what` when it overflows int64
inline std::int64_t add_checked(const char* function, const char* what, std::int64_t a,
                                std::int64_t b) {
  std::int64_t r;
  MARG_EXPECTS(!__builtin_add_overflow(a, b, &r), std::string(function) + ": " + what + " = " +
                                                      std::to_string(a) + " + " +
                                                      std::to_string(b) + " overflows int64");
  return r;
}

/// a - b, or marg::invalid_argument naming `what` when it overflows int64
inline std::int64_t sub_checked(const char* function, const char* what, std::int64_t a,
                                std::int64_t b) {
  std::int64_t r;
  MARG_EXPECTS(!__builtin_sub_overflow(a, b, &r), std::string(function) + ": " + what + " = " +
                                                      std::to_string(a) + " - " +
                                                      std::to_string(b) + " overflows int64");
  return r;
}

/// a support length as the int of the numeric API, or marg::invalid_argument
inline int length_checked(const char* function, const char* what, std::int64_t n) {
  MARG_EXPECTS(n >= 1 && n <= INT_MAX,
               bad_argument(function, what, n, "in 1..INT_MAX, the numeric layer's limit"));
  return static_cast<int>(n);
}

template <class T>
void check_nonempty(const char* function, const char* name, const pmf<T>& x) {
  MARG_EXPECTS(!x.empty(), std::string(function) + ": " + name +
                               " is an empty pmf (default-constructed, moved-from, or the "
                               "posterior of an impossible observation)");
}

/// Checks x and y non-empty and v.size() == size(x) + size(y) - 1 (a vector
/// over the support of x + y).
/// @return size(x) + size(y) - 1
template <class T>
int check_over_sum(const char* function, const char* name, const pmf<T>& x, const pmf<T>& y,
                   const std::vector<T>& v) {
  check_nonempty(function, "x", x);
  check_nonempty(function, "y", y);
  const int len = length_checked(function, "size(x) + size(y) - 1", x.size() + y.size() - 1);
  MARG_EXPECTS(v.size() == static_cast<std::size_t>(len),
               bad_argument(function, (std::string(name) + ".size()").c_str(),
                            static_cast<std::int64_t>(v.size()),
                            ("size(x) + size(y) - 1 = " + std::to_string(len)).c_str()));
  return len;
}

/// checks one probability or weight: finite and >= 0
template <class T>
void check_weight(const char* function, const char* name, std::size_t i, T w) {
  MARG_EXPECTS(
      std::isfinite(w) && w >= 0,
      bad_real_argument(function, (std::string(name) + "[" + std::to_string(i) + "]").c_str(),
                        static_cast<double>(w), "finite and >= 0"));
}

/// checks v[0..n) finite and >= 0, in parallel; throws naming the first bad entry
template <class T>
void check_weights(const char* f, const char* name, const T* v, std::int64_t n) {
  parallel_rows(n, 1 << 16, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    bool ok = true;
    for (std::int64_t i = i0; i < i1; ++i)
      ok &= (v[i] >= T(0)) & (v[i] <= std::numeric_limits<T>::max());  // NaN fails both
    if (!ok)
      for (std::int64_t i = i0; i < i1; ++i)
        check_weight(f, name, static_cast<std::size_t>(i), v[i]);
  });
}

/// a real parameter: finite and within [lo, hi] (open ends when the flags say so)
inline void check_real(const char* function, const char* name, double v, double lo, double hi,
                       bool lo_open, bool hi_open, const char* requirement) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  MARG_EXPECTS(ok, bad_real_argument(function, name, v, requirement));
}

/// Throws marg::invalid_argument naming `name` unless p is a probability in [0, 1].
inline void check_probability(const char* function, const char* name, double p) {
  check_real(function, name, p, 0, 1, false, false, "in [0, 1]");
}

/// check_probability for element i of the vector `name`: the name (name[i])
/// is formatted only when p is bad, so a loop over many rows stays cheap.
inline void check_probability_at(const char* function, const char* name, std::size_t i, double p) {
  if (!(p >= 0 && p <= 1))
    check_probability(function, (std::string(name) + "[" + std::to_string(i) + "]").c_str(), p);
}

/// Divides r by its long double total when the total drifted from 1 by more
/// than 16 epsilon of T (see algebra.hpp); leaves it untouched otherwise.
/// Long results run on the worker threads (a large sum's 100,001 long double
/// divisions are slow, long double having no vector form); the total is summed per chunk
/// of 8192, chunks in a fixed order, so it does not depend on the thread count.
template <class T>
void renormalize_if_drifted(T* r, std::int64_t n) {
  constexpr std::int64_t grain = 8192;
  std::vector<long double> part(static_cast<std::size_t>((n + grain - 1) / grain));
  parallel_rows(n, grain, [&](std::int64_t c, std::int64_t i0, std::int64_t i1) {
    long double s = 0;
    for (std::int64_t i = i0; i < i1; ++i) s += r[i];
    part[static_cast<std::size_t>(c)] = s;
  });
  long double s = 0;
  for (const long double p : part) s += p;
  if (s > 0 &&
      std::fabs(s - 1) > 16 * static_cast<long double>(std::numeric_limits<T>::epsilon())) {
    parallel_rows(n, grain, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) r[i] = static_cast<T>(r[i] / s);
    });
  }
}

/// the truncated mass of a sum of independent truncated terms
template <class T>
T combine_truncated(T a, T b) {
  return static_cast<T>(static_cast<long double>(a) + b - static_cast<long double>(a) * b);
}

/// The values j of x with k - j in the support of y: [lo, hi], empty when lo > hi.
struct diagonal {
  std::int64_t lo, hi;
  bool empty() const { return lo > hi; }
};

template <class T>
diagonal diagonal_of(const pmf<T>& x, const pmf<T>& y, std::int64_t k) {
  // 128-bit: k - upper(y) may overflow int64
  const __int128 lo = std::max<__int128>(x.lower(), static_cast<__int128>(k) - y.upper());
  const __int128 hi = std::min<__int128>(x.upper(), static_cast<__int128>(k) - y.lower());
  if (lo > hi) return {1, 0};
  return {static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
}

// log P(x = j) for j on the support, from the kept log-probabilities or the
// log of the probability
template <class T>
long double log_at(const pmf<T>& x, std::int64_t j) {
  const std::int64_t i = j - x.lower();
  return x.has_log_probs() ? static_cast<long double>(x.log_data()[i])
                           : std::log(static_cast<long double>(x.data()[i]));
}

// w_i = log x_{d.lo + i} + log y_{k - d.lo - i} along the diagonal, and their
// log-sum-exp (-inf when every term is)
template <class T>
long double log_weights(const pmf<T>& x, const pmf<T>& y, std::int64_t k, diagonal d,
                        std::vector<long double>& w) {
  w.resize(static_cast<std::size_t>(d.hi - d.lo + 1));
  long double mx = -INFINITY;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::int64_t j = d.lo + static_cast<std::int64_t>(i);
    w[i] = log_at(x, j) + log_at(y, k - j);
    mx = std::max(mx, w[i]);
  }
  if (mx == -INFINITY) return mx;
  long double s = 0;
  for (const long double v : w) s += std::exp(v - mx);
  return mx + std::log(s);
}

/// log of T's smallest normal number: a probability below it is held
/// inexactly (denormal) or not at all by T
template <class T>
inline const double log_min_normal = std::log(static_cast<double>(std::numeric_limits<T>::min()));

/// The smallest value that a sum of linear products holds to a quarter of T's
/// rounding when up to `losses` of its terms each lost under denorm_min to
/// underflow: 4 losses denorm_min / eps, and at least T's smallest normal.
template <class T>
T underflow_floor(long double losses) {
  const long double f =
      4 * losses * std::numeric_limits<T>::denorm_min() / std::numeric_limits<T>::epsilon();
  return static_cast<T>(std::max<long double>(f, std::numeric_limits<T>::min()));
}

/// A pmf from log-probabilities `lp` (any V, -inf allowed), normalized by
/// their log-sum-exp: the probabilities are exp(lp - lse) in T, and the
/// log-probabilities are kept beside them when some non-zero probability is
/// below T's normal range.
template <class T, class V>
pmf<T> pmf_from_logs(const V* lp, std::size_t n, std::int64_t lower, T truncated = T(0)) {
  using ld = long double;
  ld mx = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) mx = std::max<ld>(mx, lp[i]);
  ld s = 0;
  for (std::size_t i = 0; i < n; ++i) s += std::exp(static_cast<ld>(lp[i]) - mx);
  // (lp - mx) - log s, not lp - (mx + log s): far from 0, mx + log s rounds
  // to mx's ulp (log-weights near 1e7 would shift every probability by ~1e-12)
  const ld log_s = std::log(s);
  const auto log_prob = [&](std::size_t i) { return (static_cast<ld>(lp[i]) - mx) - log_s; };
  array<T> a(n);
  T* d = a.data();
  bool tiny = false;
  for (std::size_t i = 0; i < n; ++i) {
    const ld l = log_prob(i);
    d[i] = static_cast<T>(std::exp(l));
    tiny = tiny || (l != -INFINITY && l < log_min_normal<T>);
  }
  if (!tiny) return pmf<T>(trusted, std::move(a), lower, truncated);
  array<T> logs(n);
  T* g = logs.data();
  for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<T>(log_prob(i));
  return pmf<T>(trusted, std::move(a), std::move(logs), lower, truncated);
}

/// @return the log of the smallest positive value of p[0..n) (+inf when none is)
template <class T>
double log_min_positive(const T* p, std::int64_t n) {
  // branch-free: the loop runs over whole batches
  T m = std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = p[i] > T(0) ? p[i] : std::numeric_limits<T>::infinity();
    m = v < m ? v : m;
  }
  return std::log(static_cast<double>(m));
}

/// @return true when soft evidence L (m + n - 1 values) on the sum of p (m
///         values) and q (n values) can form products below T's normal range:
///         the linear correlations band(q, m)^T L and band(p, n)^T L lose those
///         (the smallest positive L times the smaller of the smallest positive
///         p and q)
template <class T>
bool soft_products_underflow(const T* p, int m, const T* q, int n, const T* L) {
  return log_min_positive(L, std::int64_t{m} + n - 1) +
             std::min(log_min_positive(p, m), log_min_positive(q, n)) <
         log_min_normal<T>;
}

/// @return true when x + y must run in log space: either keeps
///         log-probabilities, or a product of their smallest non-zero
///         probabilities falls below T's normal range
template <class T>
bool needs_log_space(const pmf<T>& x, const pmf<T>& y) {
  if (x.has_log_probs() || y.has_log_probs()) return true;
  return log_min_positive(x.data(), x.size()) + log_min_positive(y.data(), y.size()) <
         log_min_normal<T>;
}

/// the log-probabilities of x in pool memory (its own, or the logs of its
/// probabilities)
template <class T>
array<T> log_probs_array(const pmf<T>& x) {
  array<T> a(static_cast<std::size_t>(x.size()));
  if (x.has_log_probs()) {
    std::copy(x.log_data(), x.log_data() + x.size(), a.data());
  } else {
    const T* p = x.data();
    T* d = a.data();
    for (std::int64_t i = 0; i < x.size(); ++i) d[i] = std::log(p[i]);
  }
  return a;
}

/// a pmf from host values; values already normalized (not checked)
template <class T, class V>
pmf<T> make_pmf(const std::vector<V>& values, std::int64_t lower, T truncated = T(0)) {
  array<T> a(values.size());
  T* d = a.data();
  for (std::size_t i = 0; i < values.size(); ++i) d[i] = static_cast<T>(values[i]);
  return pmf<T>(trusted, std::move(a), lower, truncated);
}

}  // namespace marg::detail
