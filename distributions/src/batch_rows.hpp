// Per-row kernels of pmf_batch on the host: products of two rows (or of a row
// and a reversed row, for the anti-diagonal of a joint) summed, normalized and
// inverted in a wider type than T. Not installed.
#pragma once

#include <marg/distributions/batch.hpp>
#include <marg/numeric/array.hpp>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "detail.hpp"

namespace marg::detail {

/// The row length of the sums of x and y, length(x) + length(y) - 1, as the
/// numeric layer's int, or marg::invalid_argument naming `function`.
template <class T>
int sum_length(const char* function, const pmf_batch<T>& x, const pmf_batch<T>& y) {
  return length_checked(function, "length(x) + length(y) - 1",
                        std::int64_t{x.length()} + y.length() - 1);
}

template <class T>
struct batch_storage {
  explicit batch_storage(array<T>&& p) : probs(std::move(p)) {}
  batch_storage(array<T>&& p, array<T>&& l, std::vector<unsigned char>&& rows)
      : probs(std::move(p)), logs(std::move(l)), log_rows(std::move(rows)) {}
  array<T> probs;
  // row-major log-probabilities (-inf in the padding), kept when some row has a
  // probability below T's normal range; empty otherwise
  array<T> logs;
  // per row: 1 where the row has such a probability (logs is its exact form)
  std::vector<unsigned char> log_rows;
  // row totals for sampling, built on first use
  mutable std::once_flag once;
  mutable std::vector<double> totals;
  // the exact log floor, found on first use when the batch carries none
  mutable std::once_flag floor_once;
  mutable double floor = 0;
};

/// Two sequences a[i] and b[i * sb] (sb = 1, or -1 for an anti-diagonal), n terms.
template <class T>
struct product_row {
  const T* a;
  const T* b;
  std::ptrdiff_t sb;
  std::int64_t n;

  template <class A>
  A term(std::int64_t i) const {
    return static_cast<A>(a[i]) * static_cast<A>(b[i * sb]);
  }
};

/// Sum of the products in double, left to right. `safe` turns false when a
/// product of nonzero factors left the normal range of double (only possible
/// for double rows) or the sum overflowed: redo the row in long double then.
/// With `smallest` given, also the smallest positive product (+inf when none is).
template <class T>
double sum_double(const product_row<T>& r, bool& safe, double* smallest = nullptr) {
  double s = 0, lo = INFINITY;
  bool bad = false;
  for (std::int64_t i = 0; i < r.n; ++i) {
    const T x = r.a[i], y = r.b[i * r.sb];
    const double w = static_cast<double>(x) * static_cast<double>(y);
    s += w;
    bad |= (w < DBL_MIN) & (x != T(0)) & (y != T(0));
    if (smallest != nullptr) lo = std::min(lo, w > 0 ? w : INFINITY);
  }
  safe = !bad && std::isfinite(s);
  if (smallest != nullptr) *smallest = lo;
  return s;
}

template <class T>
long double sum_long(const product_row<T>& r) {
  long double s = 0;
  for (std::int64_t i = 0; i < r.n; ++i) s += r.template term<long double>(i);
  return s;
}

/// The normalized products a_i b_i / s written to out[i * so].
template <class A, class T>
void write_normalized(const product_row<T>& r, A s, T* out, std::ptrdiff_t so) {
  for (std::int64_t i = 0; i < r.n; ++i) out[i * so] = static_cast<T>(r.template term<A>(i) / s);
}

/// Inversion: the first i whose running sum of products exceeds target, never a
/// zero product; the last nonzero one when rounding leaves the target unreached.
template <class A, class T>
std::int64_t pick(const product_row<T>& r, A target) {
  A c = 0;
  std::int64_t last = 0;
  for (std::int64_t i = 0; i < r.n; ++i) {
    const A w = r.template term<A>(i);
    if (w == 0) continue;
    c += w;
    last = i;
    if (c > target) return i;
  }
  return last;
}

/// Sum of the products and an inversion at u: sum in double, or in long double
/// when double is not safe for the row. Returns the sum as long double (0:
/// impossible) and sets `index` (untouched when the sum is 0).
template <class T>
long double sum_and_pick(const product_row<T>& r, double u, std::int64_t& index) {
  bool safe;
  const double s = sum_double(r, safe);
  if (safe) {
    if (s > 0) index = pick<double>(r, u * s);
    return s;
  }
  const long double sl = sum_long(r);
  if (sl > 0) index = pick<long double>(r, static_cast<long double>(u) * sl);
  return sl;
}

/// Normalizes the products into out (stride so) and returns their sum (0 when
/// they are all zero; out untouched then). With `tiny` given, sets it when a
/// normalized non-zero product falls below T's normal range (out then holds
/// it as a subnormal or 0).
template <class T>
long double normalize_into(const product_row<T>& r, T* out, std::ptrdiff_t so,
                           bool* tiny = nullptr) {
  bool safe;
  double lo;
  const double s = sum_double(r, safe, tiny != nullptr ? &lo : nullptr);
  if (safe) {
    if (s > 0) write_normalized<double>(r, s, out, so);
    if (tiny != nullptr) *tiny = s > 0 && lo < std::numeric_limits<T>::min() * s;
    return s;
  }
  const long double sl = sum_long(r);
  if (sl > 0) write_normalized<long double>(r, sl, out, so);
  if (tiny != nullptr) {
    long double lol = INFINITY;
    for (std::int64_t i = 0; i < r.n; ++i) {
      const long double t = r.template term<long double>(i);
      if (t > 0) lol = std::min(lol, t);
    }
    *tiny = sl > 0 && lol < std::numeric_limits<T>::min() * sl;
  }
  return sl;
}

/// The anti-diagonal of the joint of row x (lower xl, length m) and row y
/// (lower yl, length n) that meets the sum k: x indices [lo, hi] (empty when
/// lo > hi), the y index of x index j being k - xl - yl - j.
struct anti_diagonal {
  std::int64_t lo = 1, hi = 0, kk = 0;  // kk = k - xl - yl (valid when not empty)
  bool empty() const { return lo > hi; }
};

inline anti_diagonal anti_diagonal_of(std::int64_t xl, int m, std::int64_t yl, int n,
                                      std::int64_t k) {
  // 128-bit: k - xl - yl may overflow int64
  const __int128 kk = static_cast<__int128>(k) - xl - yl;
  const __int128 lo = std::max<__int128>(0, kk - (n - 1));
  const __int128 hi = std::min<__int128>(m - 1, kk);
  if (lo > hi) return {};
  return {static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi),
          static_cast<std::int64_t>(kk)};
}

/// The products p_j q_{kk-j} for j on the anti-diagonal.
template <class T>
product_row<T> diagonal_products(const T* p, const T* q, const anti_diagonal& d) {
  return {p + d.lo, q + (d.kk - d.lo), -1, d.hi - d.lo + 1};
}

}  // namespace marg::detail
