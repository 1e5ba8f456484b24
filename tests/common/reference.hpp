/// @file reference.hpp
/// @brief Test references shared by the test suites: plain long double loops
/// for the three banded products, random PMF generators, error measures.
///
/// Nothing here calls libmarg: a reference must never be the code under test.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace marg::test {

/// Working precision of every reference.
using real = long double;
/// A contiguous reference vector.
using rvec = std::vector<real>;

/// The three banded products, as the tests loop over them.
enum class op { convolve, grad_p, grad_q };

/// Operand lengths: a is the first input (p or g), b the second (q or p).
struct lengths {
  std::int64_t a, b, out;
};

/// @return the operand lengths of o for sizes m, n
inline lengths lengths_of(op o, std::int64_t m, std::int64_t n) {
  switch (o) {
    case op::convolve:
      return {m, n, m + n - 1};
    case op::grad_p:
      return {m + n - 1, n, m};
    case op::grad_q:
      return {m + n - 1, m, n};
  }
  return {0, 0, 0};
}

/// @return the per-element relative error bound of the numeric contract for T
template <class T>
constexpr double tolerance() {
  return sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
}

/// @return a seed for one test run: MARG_TEST_SEED when set (to replay a
///         failure), else a fresh random one. Print it with CAPTURE/INFO.
inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("MARG_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

/// The random engine of the tests.
using rng = std::mt19937_64;

}  // namespace marg::test

/// Declares `marg::test::rng NAME` seeded with test_seed(); the seed is
/// CAPTUREd so that a failure prints it (replay with MARG_TEST_SEED). Use in
/// a Catch2 test body.
#define MARG_SEEDED_RNG(NAME)                        \
  const auto marg_seed_ = ::marg::test::test_seed(); \
  CAPTURE(marg_seed_);                               \
  ::marg::test::rng NAME(marg_seed_)

namespace marg::test {

/// @return a uniform integer in [lo, hi]
inline std::int64_t uniform_int(rng& g, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

/// Shapes of positive test vectors.
enum class shape {
  uniform,    ///< U(0, 1], no structure
  decaying,   ///< geometric-like tail over ~10 orders of magnitude
  bell,       ///< binomial-like bump with tails ~10 orders below the mode
  scattered,  ///< each element 10^-U(0, 8): wide dynamic range without order
};

/// All shapes, for loops.
inline constexpr shape all_shapes[] = {shape::uniform, shape::decaying, shape::bell,
                                       shape::scattered};

/// A positive vector (not normalized; normalize with normalized()).
/// The smallest element stays above 1e-12 so that products of two elements are
/// normal floats: every element of every product is then accurate to relative
/// precision.
/// @param g random engine
/// @param len number of elements (>= 0)
/// @param s shape
/// @return len positive values, largest about 1
template <class T>
std::vector<T> random_positive(rng& g, std::int64_t len, shape s) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(len));
  const double span = 23.0;  // ln(1e10)
  const double centre = u(g) * static_cast<double>(len);
  const double width = std::max(1.0, static_cast<double>(len) / (1.0 + 6.0 * u(g)));
  for (std::int64_t i = 0; i < len; ++i) {
    double x = 1.0;
    switch (s) {
      case shape::uniform:
        x = 1e-3 + (1.0 - 1e-3) * u(g);
        break;
      case shape::decaying:
        x = std::exp(-span * static_cast<double>(i) / std::max<double>(1.0, len - 1.0)) *
            (0.5 + 0.5 * u(g));
        break;
      case shape::bell: {
        const double z = (static_cast<double>(i) - centre) / width;
        x = std::exp(-std::min(span, 0.5 * z * z * 4.0)) * (0.9 + 0.1 * u(g));
        break;
      }
      case shape::scattered:
        x = std::pow(10.0, -8.0 * u(g));
        break;
    }
    v[static_cast<std::size_t>(i)] = static_cast<T>(std::max(x, 1e-12));
  }
  return v;
}

/// @param v values
/// @return v scaled to sum to one
template <class T>
std::vector<T> normalized(std::vector<T> v) {
  real s = 0;
  for (T x : v) s += x;
  for (T& x : v) x = static_cast<T>(x / s);
  return v;
}

/// A vector of mixed signs: uniform in [-1, 1].
/// @param g random engine
/// @param len number of elements
template <class T>
std::vector<T> random_signed(rng& g, std::int64_t len) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(len));
  for (auto& x : v) x = static_cast<T>(u(g));
  return v;
}

/// @return v widened to long double
template <class T>
rvec widen(const std::vector<T>& v) {
  return rvec(v.begin(), v.end());
}

/// r_i = sum_j p_j q_{i-j}, i < m + n - 1 (plain loop).
inline rvec ref_convolve(const rvec& p, const rvec& q) {
  if (p.empty() || q.empty()) return {};
  rvec r(p.size() + q.size() - 1, 0.0L);
  for (std::size_t j = 0; j < p.size(); ++j)
    for (std::size_t k = 0; k < q.size(); ++k) r[j + k] += p[j] * q[k];
  return r;
}

/// One element of ref_convolve, for sampled checks of huge problems.
/// @param i output index, 0 <= i < m + n - 1
inline real ref_convolve_at(const rvec& p, const rvec& q, std::int64_t i) {
  const auto m = static_cast<std::int64_t>(p.size()), n = static_cast<std::int64_t>(q.size());
  real s = 0;
  for (std::int64_t j = std::max<std::int64_t>(0, i - n + 1); j <= std::min(i, m - 1); ++j)
    s += p[j] * q[i - j];
  return s;
}

/// Correlation out_j = sum_k a_k g_{j+k}, j < len (plain loop). This is
/// gp = band(q, m)^T g with a = q, len = m, and gq = band(p, n)^T g with
/// a = p, len = n.
inline rvec ref_correlate(const rvec& g, const rvec& a, std::size_t len) {
  rvec out(len, 0.0L);
  for (std::size_t j = 0; j < len; ++j)
    for (std::size_t k = 0; k < a.size() && j + k < g.size(); ++k) out[j] += a[k] * g[j + k];
  return out;
}

/// One element of ref_correlate.
inline real ref_correlate_at(const rvec& g, const rvec& a, std::int64_t j) {
  real s = 0;
  for (std::size_t k = 0; k < a.size() && j + k < g.size(); ++k) s += a[k] * g[j + k];
  return s;
}

/// Sum of |terms| of each element of ref_correlate: the scale of its rounding
/// error when terms have mixed signs.
inline rvec ref_correlate_abs(const rvec& g, const rvec& a, std::size_t len) {
  rvec out(len, 0.0L);
  for (std::size_t j = 0; j < len; ++j)
    for (std::size_t k = 0; k < a.size() && j + k < g.size(); ++k)
      out[j] += std::fabs(a[k] * g[j + k]);
  return out;
}

/// A dense matrix in long double, row-major.
struct dense_matrix {
  std::size_t rows, cols;
  rvec data;
  /// @return element (i, j)
  real operator()(std::size_t i, std::size_t j) const { return data[i * cols + j]; }
};

/// band(x, cols): the (len(x) + cols - 1) x cols matrix whose column j holds x
/// shifted down by j, materialized.
inline dense_matrix band_matrix(const rvec& x, std::size_t cols) {
  dense_matrix b{x.size() + cols - 1, cols, {}};
  b.data.assign(b.rows * b.cols, 0.0L);
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t i = 0; i < x.size(); ++i) b.data[(i + j) * cols + j] = x[i];
  return b;
}

/// @return a * v
inline rvec multiply(const dense_matrix& a, const rvec& v) {
  rvec out(a.rows, 0.0L);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) out[i] += a(i, j) * v[j];
  return out;
}

/// @return a^T * v
inline rvec multiply_transposed(const dense_matrix& a, const rvec& v) {
  rvec out(a.cols, 0.0L);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) out[j] += a(i, j) * v[i];
  return out;
}

/// The worst element of a comparison against a reference.
struct error_report {
  real worst = 0;             ///< largest error (infinite for NaN or a sign error)
  std::int64_t index = -1;    ///< where
  real got = 0;               ///< value there
  real expected = 0;          ///< reference there
  std::int64_t failures = 0;  ///< elements above the tolerance
  std::int64_t checked = 0;   ///< elements compared

  /// Adds one element's comparison.
  void add(std::int64_t i, real g, real e, real err, double tol) {
    ++checked;
    if (std::isnan(err)) err = std::numeric_limits<real>::infinity();
    if (err > tol) ++failures;
    if (err > worst || index < 0) {
      worst = err;
      index = i;
      got = g;
      expected = e;
    }
  }
  /// @return a one-line description for INFO
  std::string describe() const {
    return "checked " + std::to_string(checked) + ", failures " + std::to_string(failures) +
           ", worst error " + num(worst, 3) + " at element " + std::to_string(index) + ": got " +
           num(got) + ", expected " + num(expected);
  }

 private:
  static std::string num(real x, int digits = 21) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*Lg", digits, x);
    return buf;
  }
};

/// The accuracy bound of a log-probability in log space (log_convolve and
/// the pmfs that keep log-probabilities): max(1e-10, 1e-14 |l|) in double,
/// max(1e-5, 1e-6 |l|) in float, plus `ulps` roundings of T at |l| for
/// inputs that were themselves rounded to T.
template <class T>
real log_tolerance(real want, real ulps = 0) {
  const real base = sizeof(T) == 4 ? std::max<real>(1e-5, 1e-6 * std::fabs(want))
                                   : std::max<real>(1e-10, 1e-14 * std::fabs(want));
  return base + ulps * std::numeric_limits<T>::epsilon() * std::fabs(want);
}

/// @return whether `got` is within log_tolerance<T>(want, ulps) of `want`
///         (-inf matches only -inf)
template <class T>
bool log_close(real got, real want, real ulps = 0) {
  if (want == -std::numeric_limits<real>::infinity()) return got == want;
  return std::isfinite(got) && std::fabs(got - want) <= log_tolerance<T>(want, ulps);
}

/// Relative error |got - expected| / |expected| of one element; when
/// expected is 0 the absolute error.
inline real relative_error(real got, real expected) {
  const real d = std::fabs(got - expected);
  return expected == 0 ? d : d / std::fabs(expected);
}

/// Whether got is within the documented accuracy bound of want
/// (docs/reliability.md): relative `tol`, plus an absolute slack of `terms`
/// times the smallest normal T, since below it each term may be flushed or
/// rounded to a subnormal. NaN and negative values fail.
/// @param got value under test
/// @param want reference
/// @param terms terms (or roundings) that may each lose a subnormal
/// @param tol relative tolerance
template <class T>
bool within_subnormal_bound(real got, real want, int terms, double tol = tolerance<T>()) {
  if (std::isnan(got) || got < 0) return false;
  return std::fabs(got - want) <=
         static_cast<real>(tol) * want + terms * static_cast<real>(std::numeric_limits<T>::min());
}

/// Per-element relative errors of got against a reference.
/// @param got values under test
/// @param expected reference, same length
/// @param tol tolerance counted in error_report::failures
template <class T>
error_report compare(const std::vector<T>& got, const rvec& expected, double tol) {
  error_report rep;
  if (got.size() != expected.size()) {
    rep.worst = std::numeric_limits<real>::infinity();
    rep.failures = 1;
    return rep;
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    rep.add(static_cast<std::int64_t>(i), got[i], expected[i], relative_error(got[i], expected[i]),
            tol);
  return rep;
}

/// Errors of got against expected scaled by the sum of |terms| of each
/// element (the error measure for mixed-sign inputs).
template <class T>
error_report compare_scaled(const std::vector<T>& got, const rvec& expected, const rvec& scale,
                            double tol) {
  error_report rep;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const real d = std::fabs(got[i] - expected[i]);
    rep.add(static_cast<std::int64_t>(i), got[i], expected[i], scale[i] == 0 ? d : d / scale[i],
            tol);
  }
  return rep;
}

}  // namespace marg::test
