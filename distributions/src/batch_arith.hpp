// The per-row arithmetic of binomial_batch and binomial_count_evidence, shared
// by the host path (batch_factories.cpp, compiled by the C++ compiler) and the
// device path (cuda/batch_device.cu, compiled with -fmad=false). One source, so
// both round the same operations in the same order: the device rows are the
// host rows bit for bit. The host compiler contracts a*b + c into an FMA by
// default where the target has one (g++ -ffp-contract=fast, also under
// -std=c++20: aarch64, or x86-64 with MARG_NATIVE; the default x86-64 build
// targets the baseline, without FMA); of the expressions here only the log
// scale's last two terms give it that chance (a log scale is compared with a
// tolerance: the device's lgamma differs anyway); the recurrences never feed
// a product only to additions.
// Not installed.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MARG_HD __host__ __device__
#else
#define MARG_HD
#endif

namespace marg::detail {

/// relative accuracy of binomial_batch's estimate of the dropped mass
constexpr double binomial_dropped_accuracy = 1e-3;

/// One side of a binomial walked from the mode: the ratio of consecutive
/// values, P(k+1)/P(k) going up, P(k-1)/P(k) going down (one division each).
struct binomial_side {
  double n, odds;  // odds: p/(1-p) going up, (1-p)/p going down
  bool up;
  MARG_HD double ratio(std::int64_t k) const {
    const double kk = static_cast<double>(k);
    return up ? (n - kk) / (kk + 1) * odds : kk / (n - kk + 1) * odds;
  }
  MARG_HD bool at_end(std::int64_t k) const { return up ? static_cast<double>(k) >= n : k <= 0; }
  MARG_HD std::int64_t next(std::int64_t k) const { return up ? k + 1 : k - 1; }
};

/// Walks one side from the mode, handing each kept value (relative to the
/// mode's 1) to keep(v). Stops at the first k whose remaining mass beyond,
/// bounded geometrically (the ratios fall away from the mode), is below
/// tail * kept. Returns the number kept; adds the kept sum to `kept` and the
/// (estimated) dropped sum to `dropped`.
template <class Keep>
MARG_HD std::int64_t binomial_walk(const binomial_side& s, std::int64_t mode, double tail,
                                   double& kept, double& dropped, Keep&& keep) {
  std::int64_t k = mode, count = 0;
  double v = 1, r = s.at_end(k) ? 0 : s.ratio(k);
  while (!s.at_end(k)) {
    const double vn = v * r;
    const std::int64_t kn = s.next(k);
    const double rn = s.at_end(kn) ? 0 : s.ratio(kn);
    if (vn == 0 || (rn < 1 && vn < tail * kept * (1 - rn))) {
      // the mass beyond k: the series until the geometric bound is 0.1% of it
      double d = 0, w = vn;
      for (std::int64_t j = kn;;) {
        d += w;
        if (s.at_end(j) || w == 0) break;
        const double rj = s.ratio(j);
        w *= rj;
        j = s.next(j);
        if (rj < 1 && w / (1 - rj) <= binomial_dropped_accuracy * d) {
          d += w / (1 - rj);
          break;
        }
      }
      dropped += d;
      return count;
    }
    keep(vn);
    kept += vn;
    ++count;
    v = vn;
    k = kn;
    r = rn;
  }
  return count;
}

/// A keep() for binomial_window_of that stores nothing (the device path
/// replays the products when it writes the row).
struct discard_values {
  MARG_HD void operator()(double) const {}
};

/// A binomial row's window around its mode: `up` values kept above it and
/// `down` below, their sum (the mode's value 1 included) and the dropped mass.
struct binomial_window {
  std::int64_t mode = 0, up = 0, down = 0;
  double kept = 1, dropped = 0;
  MARG_HD std::int64_t lower() const { return mode - down; }
  MARG_HD std::int64_t size() const { return up + down + 1; }
  /// @return the fraction of the mass outside the window
  MARG_HD double truncated() const { return dropped / (kept + dropped); }
};

/// The window of Binomial(n, p) (n >= 0, p in [0, 1]): keep(v) receives the
/// kept values relative to the mode's, those above it (outward), then those
/// below it (outward). n = 0, p = 0 or p = 1: the point mass, nothing kept.
template <class Keep>
MARG_HD binomial_window binomial_window_of(std::int64_t n, double p, double tail, Keep&& keep) {
  binomial_window w;
  if (n == 0 || p == 0 || p == 1) {
    w.mode = p == 1 ? n : 0;
    return w;
  }
  const double odds = p / (1 - p), nd = static_cast<double>(n);
  const auto top = static_cast<std::int64_t>(::floor((nd + 1) * p));
  w.mode = top < n ? top : n;
  w.up = binomial_walk(binomial_side{nd, odds, true}, w.mode, tail, w.kept, w.dropped, keep);
  w.down =
      binomial_walk(binomial_side{nd, (1 - p) / p, false}, w.mode, tail, w.kept, w.dropped, keep);
  return w;
}

/// Row b of binomial_count_evidence over N = base .. base + len - 1, written
/// into L (zeroed by the caller): L(N) = P(Y = y | N), Y ~ Binomial(N, rho), 0
/// where N < y or N > n_max, divided by its largest value. Returns the log of
/// that value (-inf: the row is zero everywhere); lgamma(a) is the caller's
/// (thread-safe on the host, the device's in a kernel).
template <class T, class Lgamma>
MARG_HD double count_evidence_row(std::int64_t base, int len, std::int64_t y, double rho,
                                  std::int64_t n_max, T* L, Lgamma&& lgamma_of) {
  const double none = -static_cast<double>(INFINITY);
  const std::int64_t last = base + (len - 1);
  const std::int64_t lo = base > y ? base : y, hi = last < n_max ? last : n_max;
  if (lo > hi) return none;
  if (rho == 0) {  // nothing is reported: L = 1 where y = 0
    if (y != 0) return none;
    for (std::int64_t i = lo; i <= hi; ++i) L[i - base] = T(1);
    return 0;
  }
  const double q = 1 - rho;
  if (q <= 0) {  // every count is reported
    if (y < lo || y > hi) return none;
    L[y - base] = T(1);
    return 0;
  }
  // L increases while N + 1 < y / rho
  const double top = ::ceil(static_cast<double>(y) / rho - 1);
  const std::int64_t mode = top <= static_cast<double>(lo)   ? lo
                            : top >= static_cast<double>(hi) ? hi
                                                             : static_cast<std::int64_t>(top);
  L[mode - base] = T(1);
  double v = 1;
  for (std::int64_t i = mode; i < hi && v > 0; ++i) {
    v *= static_cast<double>(i + 1) / static_cast<double>(i + 1 - y) * q;
    L[i + 1 - base] = static_cast<T>(v);
  }
  v = 1;
  for (std::int64_t i = mode; i > lo && v > 0; --i) {
    v *= static_cast<double>(i - y) / static_cast<double>(i) / q;
    L[i - 1 - base] = static_cast<T>(v);
  }
  const double md = static_cast<double>(mode), yd = static_cast<double>(y);
  return lgamma_of(md + 1) - lgamma_of(yd + 1) - lgamma_of(md - yd + 1) + yd * ::log(rho) +
         (md - yd) * ::log1p(-rho);
}

}  // namespace marg::detail
